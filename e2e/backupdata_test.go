//go:build e2e

package e2e_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/backup"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// mainOrdinal is the ordinal of the MAIN data instance.
func (s *scenario) mainOrdinal() int {
	s.t.Helper()
	ord, ok := topology.ParseDataInstanceName(s.currentMain())
	if !ok {
		s.t.Fatalf("no MAIN (%q)", s.currentMain())
	}
	return ord
}

// runOn sends auto-commit queries (CREATE SNAPSHOT is refused in an explicit transaction) to
// the data instance at ordinal over the real driver and returns the last one's rows.
func (s *scenario) runOn(cluster string, ordinal int, queries ...string) []map[string]any {
	s.t.Helper()
	network := topology.Network{Cluster: cluster, Namespace: s.ns, ClusterDomain: "cluster.local", Ports: topology.Ports{Bolt: 7687}}
	main := network.DataInstance(ordinal).Name
	addr := s.world.Resolve(network.DataInstance(ordinal).BoltServer)
	drv, err := neo4j.NewDriverWithContext("bolt://"+addr, neo4j.NoAuth())
	if err != nil {
		s.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	defer drv.Close(ctx)
	session := drv.NewSession(ctx, neo4j.SessionConfig{})
	defer session.Close(ctx)
	var rows []map[string]any
	for _, q := range queries {
		res, err := session.Run(ctx, q, nil)
		var records []*neo4j.Record
		if err == nil {
			records, err = res.Collect(ctx)
		}
		if err != nil {
			s.t.Fatalf("%s on %s: %v", q, main, err)
		}
		rows = rows[:0]
		for _, r := range records {
			rows = append(rows, r.AsMap())
		}
	}
	return rows
}

// agentClient is a backup-agent client with the cluster's backup-agent Secret, dialling the
// pods through the simulator (the hook's resolver).
func (s *scenario) agentClient(cluster string) *backup.AgentClient {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	secret, err := testEnv.Client.CoreV1().Secrets(s.ns).Get(ctx, topology.BackupAgentSecretName(cluster), metav1.GetOptions{})
	if err != nil {
		s.t.Fatalf("the backup-agent Secret: %v", err)
	}
	c, err := backup.NewAgentClient(backup.AgentClientConfig{
		Token: string(secret.Data[topology.BackupAgentTokenKey]), CAPEM: secret.Data[topology.BackupAgentCAKey],
		Resolve: s.world.Resolve,
	})
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(c.Close)
	return c
}

// agentAddress is the advertised address of the agent in the data pod at ordinal.
func (s *scenario) agentAddress(cluster string, ordinal int) string {
	return topology.Network{Cluster: cluster, Namespace: s.ns, ClusterDomain: "cluster.local"}.BackupAgentAddress(ordinal)
}

// waitUpload polls an upload job until it is no longer Running.
func waitUpload(t *testing.T, c *backup.AgentClient, addr, id string) backup.UploadStatus {
	t.Helper()
	var st backup.UploadStatus
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := eventually(ctx, 50*time.Millisecond, func() error {
		var err error
		if st, err = c.Status(ctx, addr, id); err != nil {
			return err
		}
		if st.State == backup.StateRunning {
			return fmt.Errorf("upload %s still running", id)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestBackupAgentUploadsTheMainsSnapshot: every data pod runs the real backup agent with the
// Secret the hook generated; writes go through the MAIN over Bolt, CREATE SNAPSHOT writes its
// file into the MAIN pod's directory, and the MAIN pod's agent streams it into versitygw, where
// the object has the file's exact size. Wrong credentials fail the upload with the store's
// own error.
func TestBackupAgentUploadsTheMainsSnapshot(t *testing.T) {
	s := startScenario(t, "backup-data")
	const name = "bk"
	s.create(name, "{dataInstances: 2}")
	s.waitConverged(name, convergeTimeout)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	store, err := testEnv.ObjectStore(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.CreateBucket(ctx, "backups"); err != nil {
		t.Fatal(err)
	}

	main := s.mainOrdinal()
	rows := s.runOn(name, main, "CREATE (n)", "CREATE (n)", "CREATE (n)", "CREATE SNAPSHOT")
	if len(rows) != 1 {
		t.Fatalf("CREATE SNAPSHOT returned %v", rows)
	}
	path := rows[0]["path"].(string)
	info, err := os.Stat(path)
	if err != nil {
		t.Fatalf("the snapshot file: %v", err)
	}
	if !strings.HasSuffix(path, "_timestamp_3") {
		t.Errorf("snapshot %s does not hold the 3 writes", path)
	}

	client, addr := s.agentClient(name), s.agentAddress(name, main)
	obj := backup.S3Object{Endpoint: store.Endpoint, Bucket: "backups", Key: "e2e/" + name + "/one", Region: store.Region, Insecure: true}
	creds := backup.S3Credentials{AccessKeyID: store.AccessKeyID, SecretAccessKey: store.SecretAccessKey}
	if _, err := client.Start(ctx, addr, "uid-one", backup.UploadRequest{Snapshot: path, Object: obj, Credentials: creds}); err != nil {
		t.Fatal(err)
	}
	st := waitUpload(t, client, addr, "uid-one")
	if st.State != backup.StateCompleted || st.Result.Size != info.Size() {
		t.Fatalf("upload %+v, want Completed with %d bytes", st, info.Size())
	}
	got, err := backup.StatObject(ctx, obj, creds)
	if err != nil {
		t.Fatal(err)
	}
	if got.Size != info.Size() {
		t.Fatalf("object %s holds %d bytes, the snapshot %d", obj.Key, got.Size, info.Size())
	}

	// Over HTTPS, the request's CA bundle is the only trust: with it the upload completes,
	// without it the store's certificate is refused.
	tlsObj := backup.S3Object{Endpoint: store.TLSEndpoint, Bucket: "backups", Key: "e2e/" + name + "/tls", Region: store.Region, CAPEM: store.CAPEM}
	if _, err := client.Start(ctx, addr, "uid-tls", backup.UploadRequest{Snapshot: path, Object: tlsObj, Credentials: creds}); err != nil {
		t.Fatal(err)
	}
	if st := waitUpload(t, client, addr, "uid-tls"); st.State != backup.StateCompleted || st.Result.Size != info.Size() {
		t.Fatalf("upload over HTTPS: %+v, want Completed with %d bytes", st, info.Size())
	}
	tlsObj.CAPEM, tlsObj.Key = nil, "e2e/"+name+"/untrusted"
	if _, err := client.Start(ctx, addr, "uid-untrusted", backup.UploadRequest{Snapshot: path, Object: tlsObj, Credentials: creds}); err != nil {
		t.Fatal(err)
	}
	if st := waitUpload(t, client, addr, "uid-untrusted"); st.State != backup.StateFailed || !strings.Contains(st.Error, "certificate") {
		t.Fatalf("upload to an untrusted certificate: %+v, want Failed naming the certificate", st)
	}

	wrong := backup.S3Credentials{AccessKeyID: store.AccessKeyID, SecretAccessKey: "not-the-secret"}
	obj.Key = "e2e/" + name + "/two"
	if _, err := client.Start(ctx, addr, "uid-two", backup.UploadRequest{Snapshot: path, Object: obj, Credentials: wrong}); err != nil {
		t.Fatal(err)
	}
	if st := waitUpload(t, client, addr, "uid-two"); st.State != backup.StateFailed || !strings.Contains(st.Error, "SignatureDoesNotMatch") {
		t.Fatalf("upload with a wrong secret: %+v, want Failed with the store's SignatureDoesNotMatch", st)
	}
	if _, err := backup.StatObject(ctx, obj, creds); !backup.IsNotFound(err) {
		t.Fatalf("the failed upload left an object: %v", err)
	}

	// A replica's pod restarted on its claims keeps its snapshot; its new agent knows no job
	// of the old one, which the client reports as *UnknownUploadError.
	replica := 1 - main
	replicaPath := s.runOn(name, replica, "CREATE SNAPSHOT")[0]["path"].(string)
	replicaAddr := s.agentAddress(name, replica)
	if _, err := client.Start(ctx, replicaAddr, "uid-replica", backup.UploadRequest{Snapshot: replicaPath, Object: obj, Credentials: creds}); err != nil {
		t.Fatal(err)
	}
	waitUpload(t, client, replicaAddr, "uid-replica")
	pod := fmt.Sprintf("%s-%d", topology.DataSetName(name), replica)
	host := topology.Network{Cluster: name, Namespace: s.ns, ClusterDomain: "cluster.local"}.DataInstance(replica).Host
	s.waitPodReplaced(pod, s.deletePod(pod), host)
	var unknown *backup.UnknownUploadError
	s.waitFor(convergeTimeout, func() error {
		_, err := client.Status(ctx, replicaAddr, "uid-replica")
		if !errors.As(err, &unknown) {
			return fmt.Errorf("status of the old job on the restarted agent: %v, want *UnknownUploadError", err)
		}
		return nil
	})
	listed := s.runOn(name, replica, "SHOW SNAPSHOTS")
	if len(listed) != 1 || listed[0]["path"] != replicaPath {
		t.Fatalf("SHOW SNAPSHOTS on the restarted replica: %v, want its %s", listed, replicaPath)
	}
}
