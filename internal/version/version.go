// Package version says which build a binary is: the module version and the commit it was built
// from, as the Go toolchain records them in the binary (runtime/debug.ReadBuildInfo). `go build`
// and `go install` in a Git checkout record both; a build without version control information —
// the Dockerfile's, whose context holds no .git — takes them from the linker flags it is given
// (-X github.com/memgraph-hooks/memgraph-hooks/internal/version.commit=…, and .module=…).
package version

import (
	"cmp"
	"fmt"
	"runtime/debug"
)

// Set by -ldflags -X for builds the toolchain records no version control information for.
var (
	module string
	commit string
)

// Devel is the module version of a build from a working tree without a version recorded.
const Devel = "(devel)"

// Info is what a binary knows of its own build.
type Info struct {
	// Module is the main module's version: a tag (v0.1.0), a pseudo-version naming the commit
	// (v0.0.0-20260105120000-0123456789ab, "+dirty" when the tree had changes), or Devel.
	Module string
	// Commit is the full revision, "unknown" when nothing recorded it.
	Commit string
	// Modified is true when the working tree had uncommitted changes.
	Modified bool
	// Go is the toolchain that built the binary.
	Go string
}

// Get is this binary's Info.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return From(bi, module, commit)
}

// From reads bi (nil when the binary carries no build information); ldModule and ldCommit, the
// linker's values, fill what bi does not record.
func From(bi *debug.BuildInfo, ldModule, ldCommit string) Info {
	info := Info{Module: Devel, Commit: "unknown"}
	if bi == nil {
		info.Module = cmp.Or(ldModule, info.Module)
		info.Commit = cmp.Or(ldCommit, info.Commit)
		return info
	}
	info.Go = bi.GoVersion
	if v := bi.Main.Version; v != "" && v != Devel {
		info.Module = v
	} else if ldModule != "" {
		info.Module = ldModule
	}
	info.Commit = cmp.Or(ldCommit, info.Commit)
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Commit = s.Value
		case "vcs.modified":
			info.Modified = s.Value == "true"
		}
	}
	return info
}

// String is the version as --version prints it after the command's name, e.g.
// "v0.1.0, commit 0123456789abcdef0123456789abcdef01234567, go1.26.8".
func (i Info) String() string {
	s := i.Module + ", commit " + i.Commit
	if i.Modified {
		s += " (modified)"
	}
	if i.Go != "" {
		s += ", " + i.Go
	}
	return s
}

// Line is what `<command> --version` prints: "memgraph-hooks version v0.1.0, commit …".
func Line(command string) string {
	return fmt.Sprintf("%s version %s", command, Get())
}
