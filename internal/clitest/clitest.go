// Package clitest runs a command's main function in a child process — the test binary itself,
// run again — so that a test sees the exit code, stdout and stderr a user sees.
package clitest

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// runMainEnv, set to 1, makes Main run the command instead of the tests.
const runMainEnv = "MEMGRAPH_HOOKS_CLITEST_RUN_MAIN"

// Main is a test binary's TestMain: it runs main when Command started the binary, the tests
// otherwise.
func Main(m *testing.M, main func()) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Command is the command main with args, in a child process; env is added to the environment.
func Command(t *testing.T, env []string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), runMainEnv+"=1"), env...)
	return cmd
}

// Run runs main with args and returns its exit code, stdout and stderr.
func Run(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := Command(t, env, args...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, stdout.String(), stderr.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), stdout.String(), stderr.String()
	}
	t.Fatalf("running main: %v", err)
	return 0, "", ""
}
