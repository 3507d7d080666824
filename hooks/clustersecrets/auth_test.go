package clustersecrets

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memgraph-hooks/memgraph-hooks/hooks/wire"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

func admitted(t *testing.T, spec string) *topology.Cluster {
	t.Helper()
	c, err := topology.Admit([]byte(`{"apiVersion":"memgraph.com/v1alpha1","kind":"MemgraphCluster",` +
		`"metadata":{"name":"mg","namespace":"db","uid":"u1","generation":1},"spec":` + spec + `}`))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func secret(data map[string]string) *wire.Object { return &wire.Object{Data: data} }

// spec.auth's Secret gives the credentials, or a sentence that names the Secret, what it needs
// and never its content.
func TestReadAuth(t *testing.T) {
	withAuth := admitted(t, `{"auth":{"secretName":"mg-auth"}}`)
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	cases := []struct {
		name    string
		cluster *topology.Cluster
		secret  *wire.Object
		creds   *memgraph.Credentials
		problem string
	}{
		{"no spec.auth: no credentials", admitted(t, `{}`), nil, nil, ""},
		{"both keys", withAuth, secret(map[string]string{"username": b64("hook"), "password": b64("s3cret-pw")}),
			&memgraph.Credentials{Username: "hook", Password: "s3cret-pw"}, ""},
		{"no Secret", withAuth, nil, nil,
			"Secret db/mg-auth (spec.auth.secretName) does not exist: create it in the cluster's namespace with the keys username and password of a Memgraph user with the REPLICATION, DURABILITY, MULTI_DATABASE_USE, MULTI_DATABASE_EDIT and RELOAD_TLS privileges"},
		{"no password", withAuth, secret(map[string]string{"username": b64("hook")}), nil,
			"Secret db/mg-auth (spec.auth.secretName) has no password: it needs the keys username and password"},
		{"a password that is not base64", withAuth, secret(map[string]string{"username": b64("hook"), "password": "s3cret-pw!"}), nil,
			"Secret db/mg-auth (spec.auth.secretName) has a password that is not valid base64"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := ReadAuth(tc.secret, tc.cluster)
			if diff := cmp.Diff(Auth{Creds: tc.creds, Problem: tc.problem}, got); diff != "" {
				t.Errorf("ReadAuth (-want +got):\n%s", diff)
			}
			if strings.Contains(got.Problem, "s3cret") {
				t.Errorf("the problem quotes the Secret: %s", got.Problem)
			}
		})
	}
}
