package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"k8s.io/client-go/dynamic"
)

const neverReportedCluster = `
apiVersion: memgraph.com/v1alpha1
kind: MemgraphCluster
metadata: {name: memgraph, namespace: prod, generation: 1}
spec:
  coordinators: 3
  dataInstances: 3
`

// A cluster the hook never reported on says so, and names no member's role: without a status
// nobody is known to be a follower or a replica.
func TestStatusOfANeverReportedCluster(t *testing.T) {
	client := fakeClient(t, append(testPods(t), object(t, neverReportedCluster))...)
	out, err := run(t, client, "status", "memgraph")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "status-never-reported.txt", out)
	if !strings.Contains(out, "the hook has not reported on this cluster yet") {
		t.Errorf("status does not say the hook never reported:\n%s", out)
	}
	if m := regexp.MustCompile(`(?m)^  \S+ +(follower|leader|replica|MAIN) `).FindString(out); m != "" {
		t.Errorf("a member has a role nobody observed: %q", m)
	}
}

// --version prints the plugin's module version and commit.
func TestVersionFlag(t *testing.T) {
	out, err := run(t, fakeClient(t), "--version")
	if err != nil || !regexp.MustCompile(`^kubectl memgraph version \S+, commit \S+.*\n$`).MatchString(out) {
		t.Errorf("--version: %q, %v", out, err)
	}
}

// A command line the plugin cannot run exits 2, naming the flag or argument, before it talks to
// the cluster; a failure while running exits 1.
func TestExitCodes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"status", "memgraph", "--no-such-flag"}, 2, "unknown flag: --no-such-flag"},
		{[]string{"switchover", "memgraph", "--timeout", "soon"}, 2, `invalid argument "soon" for "--timeout" flag`},
		{[]string{"status"}, 2, "accepts 1 arg(s), received 0"},
		{[]string{"pause", "a", "b"}, 2, "accepts 1 arg(s), received 2"},
		{[]string{"failover", "memgraph"}, 2, `unknown command "failover"`},
		{[]string{"switchover", "memgraph"}, 2, "switchover needs --to"},
		{[]string{"backup", "memgraph", "--backup-timeout", "5s"}, 2, "timeout must be a duration from 10s to 168h"},
		{[]string{"status", "absent"}, 1, `"absent" not found`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			connected := false
			var out, errOut bytes.Buffer
			root := newRoot(&out, &errOut, func() (dynamic.Interface, string, error) {
				connected = true
				return fakeClient(t, object(t, storedCluster)), "prod", nil
			})
			root.SetArgs(tc.args)
			var stderr bytes.Buffer
			code := exitCode(root.ExecuteContext(context.Background()), &stderr)
			if code != tc.code || !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("exit %d, stderr %q; want %d saying %q", code, stderr.String(), tc.code, tc.want)
			}
			if tc.code == 2 && tc.args[0] != "backup" && connected {
				t.Error("connected to the cluster for a command line that cannot run")
			}
			if tc.code == 2 && !strings.Contains(stderr.String(), "kubectl memgraph --help") {
				t.Errorf("stderr %q does not point to --help", stderr.String())
			}
		})
	}
}
