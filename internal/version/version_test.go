package version

import (
	"runtime/debug"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const rev = "0123456789abcdef0123456789abcdef01234567"

func build(version string, settings ...debug.BuildSetting) *debug.BuildInfo {
	return &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/memgraph-hooks/memgraph-hooks", Version: version}, Settings: settings}
}

// What --version says for each way the binary can be built.
func TestFrom(t *testing.T) {
	for _, tc := range []struct {
		name               string
		bi                 *debug.BuildInfo
		ldModule, ldCommit string
		want               string
	}{
		{"go install module@v0.1.0", build("v0.1.0"), "", "",
			"v0.1.0, commit unknown, go1.26.8"},
		{"go build in a clean checkout", build("v0.0.0-20260105120000-0123456789ab",
			debug.BuildSetting{Key: "vcs.revision", Value: rev}, debug.BuildSetting{Key: "vcs.modified", Value: "false"}), "", "",
			"v0.0.0-20260105120000-0123456789ab, commit " + rev + ", go1.26.8"},
		{"go build with uncommitted changes", build("v0.0.0-20260105120000-0123456789ab+dirty",
			debug.BuildSetting{Key: "vcs.revision", Value: rev}, debug.BuildSetting{Key: "vcs.modified", Value: "true"}), "", "",
			"v0.0.0-20260105120000-0123456789ab+dirty, commit " + rev + " (modified), go1.26.8"},
		{"go run, or a tree without .git", build(Devel), "", "",
			"(devel), commit unknown, go1.26.8"},
		{"the Dockerfile: no VCS, linker flags", build(Devel), "v0.1.0-3-g0123456", rev,
			"v0.1.0-3-g0123456, commit " + rev + ", go1.26.8"},
		{"the Dockerfile without build args", build(Devel), "", "",
			"(devel), commit unknown, go1.26.8"},
		{"VCS information wins over linker flags", build("v0.1.0", debug.BuildSetting{Key: "vcs.revision", Value: rev}), "v9", "feedface",
			"v0.1.0, commit " + rev + ", go1.26.8"},
		{"no build information", nil, "", "", "(devel), commit unknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, From(tc.bi, tc.ldModule, tc.ldCommit).String()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
