package wire

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A status.phase is kept as sent, whether a known phase or not; one of the wrong type is a bad
// request naming its path. Only a status with a MemgraphBackup's fields has them (BackupStatus).
func TestPhaseAndBackupStatus(t *testing.T) {
	for _, tc := range []struct {
		body   string
		phase  Phase
		backup *BackupStatus
	}{
		{`{"status":{"phase":"Running","podIP":"10.0.0.1"}}`, "Running", nil},
		{`{"status":{"phase":"Evicted"}}`, "Evicted", nil},
		{`{"status":{"phase":"Com\u0070leted"}}`, "Completed", nil},
		{`{"status":{"phase":null}}`, "", nil},
		{`{"status":{"phase":"Completed","key":"p/k","bucket":"b","endpoint":"https://s3","size":9,"snapshotTimestamp":3,` +
			`"databases":[{"name":"memgraph","key":"p/k","size":9,"sha256":"aa","crc32c":"c==","snapshotTimestamp":3}]}}`, "Completed",
			&BackupStatus{Key: "p/k", Bucket: "b", Endpoint: "https://s3", Size: 9, SnapshotTimestamp: 3,
				Databases: []BackupDatabase{{Name: "memgraph", Key: "p/k", Size: 9, SHA256: "aa", CRC32C: "c==", SnapshotTimestamp: 3}}}},
	} {
		var obj Object
		if err := DecodeBody([]byte(tc.body), &obj); err != nil {
			t.Fatalf("%s: %v", tc.body, err)
		}
		if obj.Status.Phase != tc.phase || !cmp.Equal(obj.Status.BackupStatus, tc.backup) {
			t.Errorf("%s: phase %q, backup %+v; want %q, %+v", tc.body, obj.Status.Phase, obj.Status.BackupStatus, tc.phase, tc.backup)
		}
	}
	var obj Object
	if err := DecodeAt([]byte(`{"status":{"phase":5}}`), "related[x]", &obj); err == nil || err.Error() != "related[x].status.phase must be a string, got a number" {
		t.Errorf("a phase that is a number: %v", err)
	}
}
