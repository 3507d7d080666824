package memgraphhooks_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	dockerBuildRE = regexp.MustCompile(`(?m)^RUN (CGO_ENABLED=0 go build .* -o (\S+) (\./cmd/\S+))$`)
	dockerCopyRE  = regexp.MustCompile(`(?m)^COPY --from=build (\S+) (\S+)$`)
	entrypointRE  = regexp.MustCompile(`(?m)^ENTRYPOINT \["([^"]+)"\]$`)
)

// Docker cannot run here (nor in CI), so `make image` is checked in parts: the Dockerfile's build
// line, run as written but for its output path and with the build arguments make image passes,
// builds a binary that starts and reports the version and commit it was given (docker's context
// has no .git); the final stage copies that very file to the ENTRYPOINT; and the install's
// Deployment runs the ENTRYPOINT (it sets no command of its own) of the image make image builds.
func TestDockerfileBuildsTheBinaryTheInstallRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the hook")
	}
	dockerfile := readDoc(t, "Dockerfile")
	build := dockerBuildRE.FindStringSubmatch(dockerfile)
	if build == nil {
		t.Fatalf("Dockerfile has no RUN CGO_ENABLED=0 go build … -o <binary> ./cmd/<name> line")
	}
	out := build[2]
	cp := dockerCopyRE.FindStringSubmatch(dockerfile)
	entry := entrypointRE.FindStringSubmatch(dockerfile)
	if cp == nil || cp[1] != out || entry == nil || entry[1] != cp[2] {
		t.Fatalf("the final stage must copy %s and run it: COPY %v, ENTRYPOINT %v", out, cp, entry)
	}
	deployment := readDoc(t, "manifests/deployment.yaml")
	if strings.Contains(deployment, "command:") {
		t.Errorf("manifests/deployment.yaml sets a command: it must run the image's ENTRYPOINT %s", entry[1])
	}
	if image := makeImage(t); !strings.Contains(deployment, "image: "+image+"\n") {
		t.Errorf("manifests/deployment.yaml does not run %s, the image make image builds", image)
	}
	for _, arg := range []string{"ARG VERSION=", "ARG COMMIT="} {
		if !strings.Contains(dockerfile, "\n"+arg+"\n") {
			t.Errorf("the Dockerfile lacks %q, which make image passes", arg)
		}
	}

	bin := filepath.Join(t.TempDir(), filepath.Base(out))
	line := strings.Replace(build[1], "-o "+out, "-o "+bin, 1)
	cmd := exec.Command("sh", "-c", line)
	cmd.Env = append(os.Environ(), "VERSION=v0.1.0-2-gabcdef1", "COMMIT=abcdef1234567890abcdef1234567890abcdef12", "GOFLAGS=-buildvcs=false")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", line, err, b)
	}
	help, err := exec.Command(bin, "--help").CombinedOutput()
	if err != nil || !strings.Contains(string(help), "Usage: memgraph-hooks") {
		t.Errorf("%s --help: %v\n%s", bin, err, help)
	}
	version, err := exec.Command(bin, "--version").CombinedOutput()
	const want = "memgraph-hooks version v0.1.0-2-gabcdef1, commit abcdef1234567890abcdef1234567890abcdef12, go"
	if err != nil || !strings.HasPrefix(string(version), want) {
		t.Errorf("%s --version: %v, %q; want %q…", bin, err, version, want)
	}
}

// makeImage is the Makefile's default IMAGE, the image make image builds.
func makeImage(t *testing.T) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^IMAGE \?= (\S+)$`).FindStringSubmatch(readDoc(t, "Makefile"))
	if m == nil {
		t.Fatal("the Makefile sets no default IMAGE")
	}
	return m[1]
}
