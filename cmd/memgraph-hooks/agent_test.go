package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/backup"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/backupcontroller"
	"github.com/memgraph-hooks/memgraph-hooks/internal/s3test"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim"
)

// A command line the agent cannot run with exits 2 with one line naming the problem.
func TestAgentBadCommandLinesExitTwo(t *testing.T) {
	dir := t.TempDir()
	token := filepath.Join(dir, "token")
	if err := os.WriteFile(token, []byte("t0ken\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"agent", "--auth-token-file=" + token}, "--tls-cert-file and --tls-key-file are required"},
		{[]string{"agent", "--tls-cert-file=x", "--tls-key-file=y"}, "--auth-token-file is required"},
		{[]string{"agent", "--bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"agent", "extra"}, `unexpected argument "extra"`},
		{[]string{"agent", "--tls-cert-file=" + filepath.Join(dir, "none.crt"), "--tls-key-file=" + filepath.Join(dir, "none.key"), "--auth-token-file=" + token}, "--tls-"},
	} {
		code, _, stderr := runMain(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.msg) {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming %q", tc.args, code, stderr, tc.msg)
		}
	}
	if code, stdout, _ := runMain(t, "agent", "--help"); code != 0 || !strings.Contains(stdout, "-snapshot-dir") {
		t.Errorf("agent --help: exit %d, stdout %q", code, stdout)
	}
}

// The agent serves HTTPS with the certificate it is given, backs up the Memgraph of its pod
// (reached on the loopback interface at the advertised port) when the client asks, takes a
// rotated token without a restart, and stops on SIGTERM.
func TestAgentBacksUpAndTakesARotatedToken(t *testing.T) {
	store := s3test.New(t, []string{"backups"})

	dir := t.TempDir()
	world := sim.NewWorld(sim.WithSnapshotCost(sim.SnapshotCost{BytesPerTransaction: 1000}))
	defer world.Close()
	must(t, world.StartData(sim.DataSpec{Host: "data-0.db.svc", BoltPort: 7687, ManagementPort: 10000, DataDir: filepath.Join(dir, "data")}))
	// The instance listens on a loopback port; advertised at that port, the agent's loopback dial reaches it.
	_, boltPort, _ := net.SplitHostPort(world.Resolve("data-0.db.svc:7687"))
	advertised := net.JoinHostPort("data-0.db.svc", boltPort)
	material, err := backup.NewAgentTLS([]string{"data-0.db.svc"})
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"tls.crt": material.Cert, "tls.key": material.Key, "token": []byte("first-token-0123456789\n")}
	for name, data := range files {
		must(t, os.WriteFile(filepath.Join(dir, name), data, 0o600))
	}
	cmd := command(t, "agent", "--listen=127.0.0.1:0", "--snapshot-dir="+filepath.Join(dir, "data", "snapshots"), "--credentials-reload-interval=50ms",
		"--tls-cert-file="+filepath.Join(dir, "tls.crt"), "--tls-key-file="+filepath.Join(dir, "tls.key"),
		"--auth-token-file="+filepath.Join(dir, "token"))
	stderr, err := cmd.StderrPipe()
	must(t, err)
	must(t, cmd.Start())
	defer func() { _ = cmd.Process.Kill() }()
	lines := bufio.NewScanner(stderr)
	var serving struct{ Msg, Listen string }
	var seen []string
	for lines.Scan() {
		seen = append(seen, lines.Text())
		if json.Unmarshal(lines.Bytes(), &serving) == nil && serving.Msg == "serving the backup agent" {
			break
		}
	}
	if serving.Listen == "" {
		t.Fatalf("no \"serving the backup agent\" line (%v) in:\n%s", lines.Err(), strings.Join(seen, "\n"))
	}
	go func() { _, _ = io.Copy(io.Discard, stderr) }()
	_, port, _ := net.SplitHostPort(serving.Listen)
	addr := net.JoinHostPort("data-0.db.svc", port)
	client := func(token string) *backupcontroller.AgentClient {
		c, err := backupcontroller.NewAgentClient(backupcontroller.AgentClientConfig{Token: token, CAPEM: material.CA,
			Resolve: func(string) string { return serving.Listen }})
		must(t, err)
		return c
	}
	ctx := context.Background()
	req := backup.JobRequest{Kind: backup.KindBackup, Memgraph: backup.MemgraphTarget{Address: advertised}, Role: "main",
		Deadline:    time.Now().Add(time.Minute),
		Store:       backup.S3Object{Endpoint: store.URL, Bucket: "backups", Key: "a/b", Region: "us-east-1"},
		Credentials: backup.S3Credentials{AccessKeyID: "k", SecretAccessKey: "s"}}
	if _, err := client("first-token-0123456789").Start(ctx, addr, "job-1", req); err != nil {
		t.Fatal(err)
	}
	var st backup.JobStatus
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if st, err = client("first-token-0123456789").Status(ctx, addr, "job-1"); err != nil || st.Done() {
			break
		}
	}
	if err != nil || st.State != backup.StateCompleted || len(st.Databases) != 1 || st.Databases[0].Size == 0 {
		t.Fatalf("backup: %+v, %v; want Completed with the default database's snapshot uploaded", st, err)
	}

	must(t, os.WriteFile(filepath.Join(dir, "token"), []byte("second-token-0123456789\n"), 0o600))
	var ae *backupcontroller.AgentError
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		_, err = client("first-token-0123456789").Status(ctx, addr, "job-1")
		if errors.As(err, &ae) && ae.StatusCode == 401 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("old token still admitted 5s after rotation: %v", err)
		}
	}
	if st, err := client("second-token-0123456789").Status(ctx, addr, "job-1"); err != nil || st.State != backup.StateCompleted {
		t.Fatalf("rotated token: %+v, %v", st, err)
	}
	stopsOnSIGTERM(t, cmd)
}

// The agent dials the advertised address's port on the loopback interface: its own pod's
// Memgraph.
func TestAgentDialsItsOwnPod(t *testing.T) {
	for in, want := range map[string]string{"mg-data-0.mg-data.db.svc.cluster.local:7687": "127.0.0.1:7687", "[fd00::1]:7688": "127.0.0.1:7688", "no-port": "no-port"} {
		if got := loopback(in); got != want {
			t.Errorf("loopback(%s) = %s, want %s", in, got, want)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
