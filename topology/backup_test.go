package topology

import (
	"testing"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/internal/apitest"
)

// The restore's store and its name: fromBackup's own destination, else spec.backup.destination.
func TestRestoreDestinationAndLabel(t *testing.T) {
	own, other := apitest.Destination(), apitest.Destination()
	other.S3.Bucket = "other-cluster"
	for _, tc := range []struct {
		name       string
		from       *v1alpha1.FromBackup
		wantBucket string
		wantLabel  string
	}{
		{"no restore", nil, "", ""},
		{"by name", &v1alpha1.FromBackup{Name: "nightly"}, "memgraph-backups", "MemgraphBackup nightly"},
		{"by key", &v1alpha1.FromBackup{Key: "p/k"}, "memgraph-backups", "s3://memgraph-backups/p/k"},
		{"by key in another store", &v1alpha1.FromBackup{Key: "p/k", Destination: &other}, "other-cluster", "s3://other-cluster/p/k"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mc := apitest.MinimalCluster()
			mc.Spec.Backup = &v1alpha1.ClusterBackup{Destination: &own}
			if tc.from != nil {
				mc.Spec.Bootstrap = &v1alpha1.Bootstrap{FromBackup: tc.from}
			}
			c := &Cluster{mc: mc}
			bucket := ""
			if d := c.RestoreDestination(); d != nil {
				bucket = d.S3.Bucket
			}
			if bucket != tc.wantBucket || c.RestoreLabel() != tc.wantLabel {
				t.Errorf("store %q, label %q; want %q, %q", bucket, c.RestoreLabel(), tc.wantBucket, tc.wantLabel)
			}
		})
	}
}
