package backupcontroller

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memgraph-hooks/memgraph-hooks/backup"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/wire"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// asRelated is the agent Secret the cluster's hook renders, as a backup's request carries it.
func asRelated(t *testing.T, c *topology.Cluster, s AgentSecret) *agentSecretObject {
	t.Helper()
	raw, err := AgentSecretChild(c, s)
	if err != nil {
		t.Fatal(err)
	}
	var o agentSecretObject
	if err := json.Unmarshal(raw, &o); err != nil {
		t.Fatal(err)
	}
	return &o
}

var generated = map[string]string{topology.BackupAgentTokenKey: b64("tok\n"), topology.BackupAgentCertKey: b64("cert"),
	topology.BackupAgentKeyKey: b64("key"), topology.BackupAgentCAKey: b64("agent CA")}

// What the cluster's hook copies from the Secrets its spec names reaches its backups through the
// backup-agent Secret, for the generation it was copied at: the store's keys and CA, spec.tls's
// CA, spec.auth's user, and the agents' token and CA.
func TestAccessRoundTrip(t *testing.T) {
	c := admitted(t, `{"backup":{"destination":{"s3":{"endpoint":"https://s3.example.org","bucket":"backups","credentialsSecret":{"name":"s3-creds"},`+
		`"caSecret":{"name":"s3-ca"}}}},"tls":{"secretName":"mg-tls"},"auth":{"secretName":"mg-auth"}}`)
	secrets := map[string]*wire.Object{
		"s3-creds": {Data: map[string]string{"accessKeyId": b64("AK"), "secretAccessKey": b64("SK")}},
		"s3-ca":    {Data: map[string]string{"ca.crt": b64("store CA")}},
	}
	copied := CopyAccess(c, secrets, []byte("bolt CA"), "", &memgraph.Credentials{Username: "hooks", Password: "pw"}, "")
	s := AgentSecretOf(c, generated, copied)
	if s.Annotations[AnnotationAccessGeneration] != "1" || s.Annotations[AnnotationAccessProblems] != "" {
		t.Errorf("annotations %v", s.Annotations)
	}
	got := ReadAccess(c, asRelated(t, c, s))
	want := Access{Creds: backup.S3Credentials{AccessKeyID: "AK", SecretAccessKey: "SK"}, StoreCA: []byte("store CA"), BoltCA: []byte("bolt CA"),
		Memgraph: &memgraph.Credentials{Username: "hooks", Password: "pw"}, AgentCfg: AgentClientConfig{Token: "tok", CAPEM: []byte("agent CA")}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("access (-want +got):\n%s", diff)
	}
}

// A Secret the cluster names that is missing reaches the backup as the cluster's hook worded it;
// a copy made for another generation of the cluster is not used; a cluster without a destination
// copies nothing, and its agent Secret is the agents' alone.
func TestAccessProblems(t *testing.T) {
	c := admitted(t, `{"backup":{"destination":{"s3":{"endpoint":"https://s3.example.org","bucket":"backups","credentialsSecret":{"name":"s3-creds"}}}},`+
		`"auth":{"secretName":"mg-auth"}}`)
	copied := CopyAccess(c, nil, nil, "", nil, "Secret db/mg-auth (spec.auth.secretName) does not exist")
	got := ReadAccess(c, asRelated(t, c, AgentSecretOf(c, generated, copied)))
	want := []string{"Secret db/s3-creds (spec.backup.destination.s3.credentialsSecret) does not exist: create it with the keys accessKeyId and secretAccessKey",
		"Secret db/mg-auth (spec.auth.secretName) does not exist"}
	if diff := cmp.Diff(want, got.Problems); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	stale := asRelated(t, c, AgentSecretOf(c, generated, &Copied{Data: map[string]string{}}))
	stale.Metadata.Annotations[AnnotationAccessGeneration] = "0"
	if got := ReadAccess(c, stale); len(got.Problems) != 1 || !strings.Contains(got.Problems[0], "has not yet copied") {
		t.Errorf("a copy of another generation: %v", got.Problems)
	}
	if got := ReadAccess(c, nil); len(got.Problems) != 1 || !strings.Contains(got.Problems[0], "does not exist yet") {
		t.Errorf("no agent Secret: %v", got.Problems)
	}
	none := admitted(t, `{}`)
	if copied := CopyAccess(none, nil, nil, "", nil, ""); copied != nil {
		t.Errorf("a cluster without a destination copies %+v", copied)
	}
	withExtra := map[string]string{"accessKeyId": b64("left over")}
	for k, v := range generated {
		withExtra[k] = v
	}
	if s := AgentSecretOf(none, withExtra, nil); !cmp.Equal(s, AgentSecret{Data: generated}) {
		t.Errorf("the agent Secret of a cluster without a destination: %+v", s)
	}
}

// A restore's pass reads the agents' token and CA through the same reader as a backup's, and a
// Secret that is missing or lacks a key says so by name.
func TestAgentConfigOf(t *testing.T) {
	c := admitted(t, `{}`)
	where := "Secret " + c.Namespace() + "/" + topology.BackupAgentSecretName(c.Name())
	for _, tc := range []struct {
		name     string
		data     map[string]string
		want     AgentClientConfig
		problems []string
	}{
		{"generated", generated, AgentClientConfig{Token: "tok", CAPEM: []byte("agent CA")}, nil},
		{"not created yet", nil, AgentClientConfig{}, []string{where + " does not exist yet: the cluster's hook creates it"}},
		{"no token", map[string]string{topology.BackupAgentCAKey: b64("agent CA")}, AgentClientConfig{CAPEM: []byte("agent CA")},
			[]string{where + " has no " + topology.BackupAgentTokenKey + ": the cluster's hook writes it"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, problems := AgentConfigOf(c, tc.data)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.problems, problems); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}
