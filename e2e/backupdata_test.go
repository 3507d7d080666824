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
	"github.com/memgraph-hooks/memgraph-hooks/hooks/backupcontroller"
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
func (s *scenario) agentClient(cluster string) *backupcontroller.AgentClient {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	secret, err := testEnv.Client.CoreV1().Secrets(s.ns).Get(ctx, topology.BackupAgentSecretName(cluster), metav1.GetOptions{})
	if err != nil {
		s.t.Fatalf("the backup-agent Secret: %v", err)
	}
	c, err := backupcontroller.NewAgentClient(backupcontroller.AgentClientConfig{
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

// waitJob polls a job until it is done.
func waitJob(t *testing.T, c *backupcontroller.AgentClient, addr, id string) backup.JobStatus {
	t.Helper()
	var st backup.JobStatus
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := eventually(ctx, 50*time.Millisecond, func() error {
		var err error
		if st, err = c.Status(ctx, addr, id); err != nil {
			return err
		}
		if !st.Done() {
			return fmt.Errorf("job %s still %s", id, st.Phase)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestBackupAgentJobsOnTheControlPlane: every data pod runs the real backup agent with the Secret
// the hook generated; a backup job on the MAIN's agent snapshots the MAIN over Bolt (as its pod's
// agent reaches it) and streams the file into versitygw, where the object has the recorded size.
// Over HTTPS the request's CA bundle is the only trust; wrong credentials fail the upload with the
// store's own error and leave no object. A restarted agent knows no job of the old one.
func TestBackupAgentJobsOnTheControlPlane(t *testing.T) {
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
	s.runOn(name, main, "CREATE (n)", "CREATE (n)", "CREATE (n)")
	client, addr := s.agentClient(name), s.agentAddress(name, main)
	network := topology.Network{Cluster: name, Namespace: s.ns, ClusterDomain: "cluster.local", Ports: topology.Ports{Bolt: 7687}}
	creds := backup.S3Credentials{AccessKeyID: store.AccessKeyID, SecretAccessKey: store.SecretAccessKey}
	job := func(instance int, store backup.S3Object, creds backup.S3Credentials) backup.JobRequest {
		return backup.JobRequest{Kind: backup.KindBackup, Memgraph: backup.MemgraphTarget{Address: network.DataInstance(instance).BoltServer},
			Role: "main", Deadline: time.Now().Add(time.Minute), Store: store, Credentials: creds}
	}
	plain := backup.S3Object{Endpoint: store.Endpoint, Bucket: "backups", Key: "e2e/" + name + "/one", Region: store.Region, Insecure: true}
	if _, err := client.Start(ctx, addr, "uid-one", job(main, plain, creds)); err != nil {
		t.Fatal(err)
	}
	st := waitJob(t, client, addr, "uid-one")
	if st.State != backup.StateCompleted || len(st.Databases) != 1 || st.Databases[0].SnapshotTimestamp != 3 {
		t.Fatalf("job %+v, want Completed with the 3 writes", st)
	}
	info, err := os.Stat(st.Databases[0].Snapshot)
	if err != nil {
		t.Fatalf("the snapshot file: %v", err)
	}
	obj := plain
	obj.Key = st.Databases[0].Key
	got, err := backup.StatObject(ctx, obj, creds)
	if err != nil || got.Size != info.Size() || st.Databases[0].Size != info.Size() {
		t.Fatalf("object %s: %+v, %v; the snapshot holds %d bytes, the job says %d", obj.Key, got, err, info.Size(), st.Databases[0].Size)
	}

	tlsStore := backup.S3Object{Endpoint: store.TLSEndpoint, Bucket: "backups", Key: "e2e/" + name + "/tls", Region: store.Region, CAPEM: store.CAPEM}
	if _, err := client.Start(ctx, addr, "uid-tls", job(main, tlsStore, creds)); err != nil {
		t.Fatal(err)
	}
	if st := waitJob(t, client, addr, "uid-tls"); st.State != backup.StateCompleted {
		t.Fatalf("a job over HTTPS: %+v, want Completed", st)
	}
	tlsStore.CAPEM, tlsStore.Key = nil, "e2e/"+name+"/untrusted"
	if _, err := client.Start(ctx, addr, "uid-untrusted", job(main, tlsStore, creds)); err != nil {
		t.Fatal(err)
	}
	if st := waitJob(t, client, addr, "uid-untrusted"); st.State != backup.StateFailed || !strings.Contains(st.Error, "certificate") {
		t.Fatalf("a job to an untrusted certificate: %+v, want Failed naming the certificate", st)
	}
	wrong := backup.S3Credentials{AccessKeyID: store.AccessKeyID, SecretAccessKey: "not-the-secret"}
	plain.Key = "e2e/" + name + "/two"
	if _, err := client.Start(ctx, addr, "uid-two", job(main, plain, wrong)); err != nil {
		t.Fatal(err)
	}
	if st := waitJob(t, client, addr, "uid-two"); st.State != backup.StateFailed || !strings.Contains(st.Error, "SignatureDoesNotMatch") {
		t.Fatalf("a job with a wrong secret: %+v, want Failed with the store's SignatureDoesNotMatch", st)
	}
	plain.Key = "e2e/" + name + "/two/"
	if objs := s.objectsIn(plain, creds); len(objs) != 0 {
		t.Fatalf("the failed upload left objects: %v", objs)
	}

	// A replica's pod restarted on its claims keeps its snapshots; its new agent knows no job of
	// the old one, which the client reports as *UnknownJobError.
	replica := 1 - main
	replicaAddr := s.agentAddress(name, replica)
	replicaJob := job(replica, backup.S3Object{Endpoint: store.Endpoint, Bucket: "backups", Key: "e2e/" + name + "/replica", Region: store.Region, Insecure: true}, creds)
	replicaJob.Role = "replica"
	if _, err := client.Start(ctx, replicaAddr, "uid-replica", replicaJob); err != nil {
		t.Fatal(err)
	}
	replicaSnap := waitJob(t, client, replicaAddr, "uid-replica").Databases[0].Snapshot
	pod := fmt.Sprintf("%s-%d", topology.DataSetName(name), replica)
	s.waitPodReplaced(pod, s.deletePod(pod), network.DataInstance(replica).Host)
	var unknown *backupcontroller.UnknownJobError
	s.waitFor(convergeTimeout, func() error {
		_, err := client.Status(ctx, replicaAddr, "uid-replica")
		if !errors.As(err, &unknown) {
			return fmt.Errorf("status of the old job on the restarted agent: %v, want *UnknownJobError", err)
		}
		return nil
	})
	listed := s.runOn(name, replica, "SHOW SNAPSHOTS")
	if len(listed) != 1 || listed[0]["path"] != replicaSnap {
		t.Fatalf("SHOW SNAPSHOTS on the restarted replica: %v, want its %s", listed, replicaSnap)
	}
}

// objectsIn lists the objects under prefix.Key.
func (s *scenario) objectsIn(prefix backup.S3Object, creds backup.S3Credentials) []backup.ObjectInfo {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := backup.ListObjects(ctx, prefix, creds)
	if err != nil {
		s.t.Fatal(err)
	}
	return out
}
