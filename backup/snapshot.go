package backup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// errNoSnapshot: the named snapshot is not a file in the snapshot directory.
var errNoSnapshot = errors.New("no such snapshot")

// snapshotFile is an open snapshot and its size at opening.
type snapshotFile struct {
	path string
	file *os.File
	size int64
}

// openSnapshot opens name — a path directly in dir, or a base name — refusing anything else:
// another directory, "..", a symbolic link leading out of dir, a directory, a device.
func openSnapshot(dir, name string) (snapshotFile, error) {
	dir = filepath.Clean(dir)
	path := filepath.Join(dir, name)
	if filepath.IsAbs(name) {
		path = filepath.Clean(name)
	}
	if filepath.Dir(path) != dir || filepath.Base(path) == ".." || filepath.Base(path) == "." {
		return snapshotFile{}, fmt.Errorf("snapshot %q is not a file directly in the snapshot directory %s", name, dir)
	}
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return snapshotFile{}, fmt.Errorf("%w: snapshot directory %s: %v", errNoSnapshot, dir, err)
	}
	real, err := filepath.EvalSymlinks(path)
	if errors.Is(err, os.ErrNotExist) {
		return snapshotFile{}, fmt.Errorf("%w: %s does not exist", errNoSnapshot, path)
	}
	if err != nil {
		return snapshotFile{}, fmt.Errorf("snapshot %s: %v", path, err)
	}
	if filepath.Dir(real) != realDir {
		return snapshotFile{}, fmt.Errorf("snapshot %q leads out of the snapshot directory %s", name, dir)
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
