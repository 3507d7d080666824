package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/memgraph-hooks/memgraph-hooks/internal/clitest"
)

// The tests below run the real main() in a child process, so exit codes, stdout and stderr are
// the ones a user sees.
func TestMain(m *testing.M) { clitest.Main(m, main) }

// runMain runs main with args, with a kubeconfig that does not exist unless args name one.
func runMain(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return clitest.Run(t, []string{"KUBECONFIG=" + filepath.Join(t.TempDir(), "no-kubeconfig")}, args...)
}

// --help and --version print on stdout and exit 0; a command line that cannot run exits 2
// naming the flag; a cluster that cannot be read exits 1, naming --rotate, with nothing on
// stdout for kubectl apply to apply.
func TestExitCodes(t *testing.T) {
	code, stdout, stderr := runMain(t, "--version")
	if code != 0 || stderr != "" || !regexp.MustCompile(`^memgraph-hooks-secrets version \S+, commit \S+.*\n$`).MatchString(stdout) {
		t.Errorf("--version: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	code, stdout, _ = runMain(t, "--help")
	if code != 0 || !strings.Contains(stdout, "  -rotate\n") || !strings.Contains(stdout, "  -version\n") {
		t.Errorf("--help: exit %d, stdout %q", code, stdout)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--only", "ca"}, `--only "ca"`},
		{[]string{"--valid-for", "1m"}, "--valid-for must be at least 1h"},
		{[]string{"--no-such-flag"}, "flag provided but not defined: -no-such-flag"},
		{[]string{"extra"}, `unexpected argument "extra"`},
		{[]string{"--rotate", "--kubeconfig", "k"}, "--rotate reads nothing from the cluster"},
	} {
		code, stdout, stderr := runMain(t, tc.args...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "--help") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 saying %q", tc.args, code, stdout, stderr, tc.want)
		}
	}
	code, stdout, stderr = runMain(t, "--kubeconfig", filepath.Join(t.TempDir(), "absent"))
	if code != 1 || stdout != "" || !strings.Contains(stderr, "reading Secret memgraph-hooks/memgraph-hooks-tls") || !strings.Contains(stderr, "--rotate") {
		t.Errorf("unreadable cluster: exit %d, stdout %q, stderr %q; want 1 naming --rotate", code, stdout, stderr)
	}
	code, stdout, stderr = runMain(t, "--rotate", "--only", "token")
	if code != 0 || !strings.Contains(stdout, "name: memgraph-hooks-token") || !strings.Contains(stderr, "restart Metacontroller") {
		t.Errorf("--rotate: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}
