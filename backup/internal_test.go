package backup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Only a regular file directly in one of the instance's snapshot directories is opened: the
// default database's <data>/snapshots or another's <data>/databases/<uuid>/snapshots.
func TestOpenSnapshotRefusesWhatIsNotASnapshotFile(t *testing.T) {
	data := t.TempDir()
	dflt := filepath.Join(data, "snapshots")
	other := filepath.Join(data, "databases", "4f3c", "snapshots")
	for _, d := range []string{dflt, other, filepath.Join(dflt, ".old")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(path string) string {
		if err := os.WriteFile(path, []byte("snapshot"), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	outside := write(filepath.Join(data, "secret"))
	if err := os.Symlink(outside, filepath.Join(dflt, "link")); err != nil {
		t.Fatal(err)
	}
	for _, ok := range []string{write(filepath.Join(dflt, "a_timestamp_1")), write(filepath.Join(other, "b_timestamp_2"))} {
		f, err := openSnapshot(data, ok)
		if err != nil || f.size != int64(len("snapshot")) {
			t.Errorf("openSnapshot(%s): %v", ok, err)
			continue
		}
		_ = f.file.Close()
	}
	for path, msg := range map[string]string{
		outside:                                            "not a file directly in a snapshot directory",
		filepath.Join(dflt, "..", "secret"):                "not a file directly in a snapshot directory",
		filepath.Join(dflt, "link"):                        "leads out of the snapshot directories",
		filepath.Join(dflt, "gone"):                        "does not exist",
		filepath.Join(dflt, ".old"):                        "not a regular file",
		"a_timestamp_1":                                    "not a file directly in a snapshot directory",
		filepath.Join(data, "databases", "snapshots", "x"): "not a file directly in a snapshot directory",
	} {
		if _, err := openSnapshot(data, path); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("openSnapshot(%s): %v, want %q", path, err, msg)
		}
	}
}

// An upload's part is at least 16 MiB and grows, by whole MiB, so that 10,000 parts hold the
// object; beyond 10,000 parts of 64 MiB (the agent's memory bound) nothing is uploaded.
func TestPartSizeBoundsTheAgentsMemory(t *testing.T) {
	for size, want := range map[int64]uint64{0: 16 << 20, 1 << 30: 16 << 20, 160 << 30: 17 << 20, MaxUploadSize: 64 << 20} {
		if got, err := partSize(size); err != nil || got != want {
			t.Errorf("partSize(%d) = %d, %v; want %d", size, got, err, want)
		}
	}
	if _, err := partSize(MaxUploadSize + 1); err == nil {
		t.Error("an object beyond 10,000 parts of 64 MiB has a part size")
	}
}
