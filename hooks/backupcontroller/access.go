package backupcontroller

import (
	"encoding/base64"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/backup"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/wire"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// What a cluster's backups read of the Secrets the cluster's spec names — the store's keys and
// CA (spec.backup.destination), spec.tls's CA and spec.auth's user — reaches them through the
// cluster's own <cluster>-backup-agent Secret: the cluster's hook copies it there on every pass.
//
// A MemgraphBackup's customize hook cannot ask for those Secrets by name: only the cluster's
// spec names them, and a customize hook sees its own parent alone. Metacontroller caches its
// answer per parent UID and generation (v4.17.2 pkg/controller/common/customize/manager.go
// 189–233, customizeKey; 20 minutes), and a MemgraphBackup's spec never changes, so names read
// from the cluster would go stale when the cluster is edited. The cluster's own customize hook
// names them (ClusterRules), and its answer follows the cluster's generation; a change to one of
// those Secrets resyncs the cluster (related objects are watched), which copies it again. The
// backup's customize asks for one Secret, by a name its own spec gives: <cluster>-backup-agent.
// The copy records the cluster generation it follows (AnnotationAccessGeneration), so a backup
// never uses the credentials of a destination the cluster no longer names, and what was wrong
// with a Secret (AnnotationAccessProblems), in words that name it.

// The keys of the backup-agent Secret the cluster's hook copies.
const (
	accessKeyIDKey     = v1alpha1.S3AccessKeyIDKey
	secretAccessKeyKey = v1alpha1.S3SecretAccessKeyKey
	storeCAKey         = "store-ca.crt"
	boltCAKey          = "bolt-ca.crt"
	usernameKey        = "memgraph-username"
	passwordKey        = "memgraph-password"
)

// The backup-agent Secret's annotations: the cluster generation its copies follow, and what is
// wrong with the Secrets they come from (sentences joined by "; ").
const (
	AnnotationAccessGeneration = "memgraph.com/backup-access-generation"
	AnnotationAccessProblems   = "memgraph.com/backup-access-problems"
)

// AgentSecret is the cluster's backup-agent Secret as the cluster's hook returns it: data
// (base64 values) and annotations.
type AgentSecret struct {
	Data, Annotations map[string]string
}

// Copied is what the cluster's hook copies for its backups, read from the related Secrets.
type Copied struct {
	Data     map[string]string // base64 values, by the agent Secret's key
	Problems []string
}

// CopyAccess reads, for a cluster with spec.backup.destination, the Secrets its backups need:
// the destination's credentials and CA, spec.tls's CA (boltCA, as the cluster's pass read it; a
// problem with that Secret is tlsProblem) and spec.auth's user (auth; authProblem). Nil for a
// cluster without a destination: its backups wait for one and read nothing.
func CopyAccess(c *topology.Cluster, secrets map[string]*wire.Object, boltCA []byte, tlsProblem string,
	auth *memgraph.Credentials, authProblem string) *Copied {
	dest := c.BackupDestination()
	if dest == nil {
		return nil
	}
	out := &Copied{Data: map[string]string{}}
	var read Secrets
	creds := ReadCredentials(c.Namespace(), dest.S3, secrets, "spec.backup.destination.s3.credentialsSecret")
	read.Problems = append(read.Problems, creds.Problems...)
	if len(creds.Problems) == 0 {
		out.Data[accessKeyIDKey], out.Data[secretAccessKeyKey] = encode(creds.Creds.AccessKeyID), encode(creds.Creds.SecretAccessKey)
	}
	if ca := dest.S3.CASecret; ca != nil {
		if values := read.read(secrets, c.Namespace(), ca.Name, "spec.backup.destination.s3.caSecret", v1alpha1.S3CAKey); values != nil {
			out.Data[storeCAKey] = encode(values[0])
		}
	}
	switch {
	case tlsProblem != "":
		read.Problems = append(read.Problems, tlsProblem)
	case len(boltCA) > 0:
		out.Data[boltCAKey] = encode(string(boltCA))
	}
	switch {
	case authProblem != "":
		read.Problems = append(read.Problems, authProblem)
	case auth != nil:
		out.Data[usernameKey], out.Data[passwordKey] = encode(auth.Username), encode(auth.Password)
	}
	out.Problems = read.Problems
	return out
}

func encode(v string) string { return base64.StdEncoding.EncodeToString([]byte(v)) }

// AgentSecretOf is the backup-agent Secret with generated data (the agents' token and TLS,
// topology.BackupAgentSecretKeys; any other key observed is left out) and, for a cluster with a
// destination, what was copied and the generation it follows.
func AgentSecretOf(c *topology.Cluster, generated map[string]string, copied *Copied) AgentSecret {
	s := AgentSecret{Data: map[string]string{}}
	for _, k := range topology.BackupAgentSecretKeys {
		if v, ok := generated[k]; ok {
			s.Data[k] = v
		}
	}
	if copied == nil {
		return s
	}
	maps.Copy(s.Data, copied.Data)
	s.Annotations = map[string]string{AnnotationAccessGeneration: strconv.FormatInt(c.Generation(), 10)}
	if len(copied.Problems) > 0 {
		s.Annotations[AnnotationAccessProblems] = strings.Join(copied.Problems, "; ")
	}
	return s
}

// Access is what a backup's pass reads, once, from its cluster's backup-agent Secret: the
// store's credentials and CA, spec.tls's CA and spec.auth's user (the copy), and the agents'
// token and CA. Problems say what keeps a backup from starting: what is wrong with the copy or,
// once it is read, with the agents' token and CA. StoreProblems are what keeps its objects from
// being removed (the copy's alone); AgentProblems what the agents' client lacks, whatever the
// copy. None quotes a value.
type Access struct {
	Creds    backup.S3Credentials
	StoreCA  []byte
	BoltCA   []byte
	Memgraph *memgraph.Credentials
	AgentCfg AgentClientConfig

	Problems, StoreProblems, AgentProblems []string
}

// agentSecretObject is the part of the backup-agent Secret a backup reads.
type agentSecretObject struct {
	Metadata struct {
		Name        string            `json:"name"`
		Namespace   string            `json:"namespace"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Data map[string]string `json:"data"`
}

// ReadAccess reads the backup-agent Secret of cluster c (nil when it is not among the related
// objects) for a backup of c: the agents' token and CA, whatever was copied, and what the
// cluster's hook copied, for the generation c is at.
func ReadAccess(c *topology.Cluster, secret *agentSecretObject) Access {
	var out Access
	where := fmt.Sprintf("Secret %s/%s", c.Namespace(), topology.BackupAgentSecretName(c.Name()))
	if secret == nil {
		out.Problems = []string{where + " does not exist yet: the cluster's hook creates it"}
		out.StoreProblems, out.AgentProblems = out.Problems, []string{where + " does not exist"}
		return out
	}
	out.AgentCfg = agentConfig(secretValue(where, secret, &out.AgentProblems))
	switch {
	case secret.Metadata.Annotations[AnnotationAccessGeneration] != strconv.FormatInt(c.Generation(), 10):
		out.Problems = []string{fmt.Sprintf("the cluster's hook has not yet copied into %s the Secrets generation %d of MemgraphCluster %s names "+
			"(spec.backup.destination, spec.tls, spec.auth)", where, c.Generation(), c.Name())}
		out.StoreProblems = out.Problems
		return out
	case secret.Metadata.Annotations[AnnotationAccessProblems] != "":
		out.Problems = strings.Split(secret.Metadata.Annotations[AnnotationAccessProblems], "; ")
		out.StoreProblems = out.Problems
		return out
	}
	decoded := secretValue(where, secret, &out.StoreProblems)
	out.Creds = backup.S3Credentials{AccessKeyID: decoded(accessKeyIDKey, true), SecretAccessKey: decoded(secretAccessKeyKey, true)}
	if ca := decoded(storeCAKey, c.BackupDestination() != nil && c.BackupDestination().S3.CASecret != nil); ca != "" {
		out.StoreCA = []byte(ca)
	}
	if ca := decoded(boltCAKey, c.TLSSecretName() != ""); ca != "" {
		out.BoltCA = []byte(ca)
	}
	if c.AuthSecretName() != "" {
		out.Memgraph = &memgraph.Credentials{Username: decoded(usernameKey, true), Password: decoded(passwordKey, true)}
	}
	out.Problems = append(slices.Clip(out.StoreProblems), out.AgentProblems...)
	return out
}

// AgentConfigOf is the agents' client configuration from the data (base64 values) of cluster
// c's backup-agent Secret, nil when it does not exist yet, and what is wrong with it: the one
// reader of the agents' token and CA, for a restore's pass as for a backup's (ReadAccess).
func AgentConfigOf(c *topology.Cluster, data map[string]string) (AgentClientConfig, []string) {
	where := fmt.Sprintf("Secret %s/%s", c.Namespace(), topology.BackupAgentSecretName(c.Name()))
	if data == nil {
		return AgentClientConfig{}, []string{where + " does not exist yet: the cluster's hook creates it"}
	}
	var problems []string
	cfg := agentConfig(secretValue(where, &agentSecretObject{Data: data}, &problems))
	return cfg, problems
}

func agentConfig(decoded func(key string, required bool) string) AgentClientConfig {
	token, ca := decoded(topology.BackupAgentTokenKey, true), decoded(topology.BackupAgentCAKey, true)
	return AgentClientConfig{Token: strings.TrimSpace(token), CAPEM: []byte(ca)}
}

// secretValue decodes a key of the backup-agent Secret (where names it), recording in problems
// a required key that is missing and a value that is not base64.
func secretValue(where string, secret *agentSecretObject, problems *[]string) func(key string, required bool) string {
	return func(key string, required bool) string {
		if secret.Data[key] == "" {
			if required {
				*problems = append(*problems, where+" has no "+key+": the cluster's hook writes it")
			}
			return ""
		}
		raw, err := base64.StdEncoding.DecodeString(secret.Data[key])
		if err != nil {
			*problems = append(*problems, where+" has a "+key+" that is not valid base64")
		}
		return string(raw)
	}
}
