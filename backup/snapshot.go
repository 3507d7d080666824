package backup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// errNoSnapshot: the named snapshot is not a file in a snapshot directory.
var errNoSnapshot = errors.New("no such snapshot")

// snapshotFile is an open snapshot and its size at opening.
type snapshotFile struct {
	path string
	file *os.File
	size int64
}

// snapshotDirOK reports whether dir is one of the instance's snapshot directories: the default
// database's <data>/snapshots, or another database's <data>/databases/<uuid>/snapshots (Memgraph
// v3.12.0 durability/paths.hpp 22, dbms/dbms_handler.hpp 920–941).
func snapshotDirOK(dataDir, dir string) bool {
	if dir == filepath.Join(dataDir, "snapshots") {
		return true
	}
	return filepath.Base(dir) == "snapshots" && filepath.Dir(filepath.Dir(dir)) == filepath.Join(dataDir, "databases")
}

// openSnapshot opens the snapshot file at path (as CREATE SNAPSHOT named it), refusing anything
// but a regular file directly in one of the instance's snapshot directories under dataDir:
// another directory, "..", a symbolic link leading out, a directory, a device.
func openSnapshot(dataDir, path string) (snapshotFile, error) {
	dataDir = filepath.Clean(dataDir)
	path = filepath.Clean(path)
	if !filepath.IsAbs(path) || !snapshotDirOK(dataDir, filepath.Dir(path)) {
		return snapshotFile{}, fmt.Errorf("snapshot %q is not a file directly in a snapshot directory of %s", path, dataDir)
	}
	realData, err := filepath.EvalSymlinks(dataDir)
	if err != nil {
		return snapshotFile{}, fmt.Errorf("%w: data directory %s: %v", errNoSnapshot, dataDir, err)
	}
	real, err := filepath.EvalSymlinks(path)
	if errors.Is(err, os.ErrNotExist) {
		return snapshotFile{}, fmt.Errorf("%w: %s does not exist", errNoSnapshot, path)
	}
	if err != nil {
		return snapshotFile{}, fmt.Errorf("snapshot %s: %v", path, err)
	}
	if !snapshotDirOK(realData, filepath.Dir(real)) {
		return snapshotFile{}, fmt.Errorf("snapshot %q leads out of the snapshot directories of %s", path, dataDir)
	}
	f, err := os.Open(real)
	if err != nil {
		return snapshotFile{}, fmt.Errorf("snapshot %s: %v", path, err)
	}
	info, err := f.Stat()
	if err == nil && !info.Mode().IsRegular() {
		err = fmt.Errorf("%w: %s is not a regular file", errNoSnapshot, path)
	}
	if err != nil {
		_ = f.Close()
		return snapshotFile{}, err
	}
	return snapshotFile{path: path, file: f, size: info.Size()}, nil
}
