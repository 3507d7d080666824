package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memgraph-hooks/memgraph-hooks/internal/clitest"
)

// The tests below run the real main() in a child process, so exit codes, stdout and stderr are
// the ones a user sees.
func TestMain(m *testing.M) { clitest.Main(m, main) }

func command(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	return clitest.Command(t, nil, args...)
}

// runMain runs main with args and returns its exit code, stdout and stderr.
func runMain(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return clitest.Run(t, nil, args...)
}

// startLogging starts main with args and returns it with its log, line by line; the process is
// killed when the test ends.
func startLogging(t *testing.T, args ...string) (*exec.Cmd, *bufio.Scanner, io.ReadCloser) {
	t.Helper()
	cmd := command(t, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return cmd, bufio.NewScanner(stderr), stderr
}

var (
	helpFlag  = regexp.MustCompile(`(?m)^  -([a-z-]+)`)
	cellFlag  = regexp.MustCompile("`--([a-z-]+)")
	tableFlag = regexp.MustCompile("(?m)^\\| (`--[^|]*)\\|")
)

// helpAndDocFlags runs main with args (ending in --help) and returns the flags its help lists and
// those the flag table of docs/operations.md's section heading names in its first column, both
// sorted.
func helpAndDocFlags(t *testing.T, heading string, args ...string) (inHelp, inDocs []string) {
	t.Helper()
	code, stdout, stderr := runMain(t, args...)
	if code != 0 || stderr != "" {
		t.Fatalf("%v exited %d, stderr %q", args, code, stderr)
	}
	for _, m := range helpFlag.FindAllStringSubmatch(stdout, -1) {
		inHelp = append(inHelp, m[1])
	}
	if len(inHelp) == 0 {
		t.Fatalf("no flags in %v:\n%s", args, stdout)
	}
	doc, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	section := string(doc)
	start := strings.Index(section, heading)
	if start < 0 {
		t.Fatalf("docs/operations.md has no %q section", heading)
	}
	section = section[start+3:]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	for _, row := range tableFlag.FindAllStringSubmatch(section, -1) {
		for _, m := range cellFlag.FindAllStringSubmatch(row[1], -1) {
			inDocs = append(inDocs, m[1])
		}
	}
	sort.Strings(inHelp)
	sort.Strings(inDocs)
	return inHelp, inDocs
}

// --help exits 0 and lists exactly the flags docs/operations.md's "Running the hook" table
// documents.
func TestHelpListsTheFlagsOfTheDocs(t *testing.T) {
	inHelp, inDocs := helpAndDocFlags(t, "## Running the hook", "--help")
	if diff := cmp.Diff(inHelp, inDocs); diff != "" {
		t.Errorf("docs/operations.md's flag table differs from --help (-help +docs):\n%s", diff)
	}
}

// agent --help exits 0 and lists exactly the flags docs/operations.md's "The backup agent" table
// documents.
func TestAgentHelpListsTheFlagsOfTheDocs(t *testing.T) {
	inHelp, inDocs := helpAndDocFlags(t, "## The backup agent", "agent", "--help")
	if diff := cmp.Diff(inHelp, inDocs); diff != "" {
		t.Errorf("docs/operations.md's agent flag table differs from agent --help (-help +docs):\n%s", diff)
	}
}

// A command line the hook cannot run with exits 2 with one line naming the problem, before
// anything is started.
func TestBadCommandLinesExitTwo(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--no-such-flag"}, "flag provided but not defined: -no-such-flag"},
		{[]string{"--max-body-bytes", "-5"}, "--max-body-bytes must be positive, got -5"},
		{[]string{"--max-body-bytes=0"}, "--max-body-bytes must be positive, got 0"},
		{[]string{"--max-body-bytes=lots"}, `invalid value "lots" for flag -max-body-bytes`},
		{[]string{"simulate"}, `unexpected argument "simulate"`},
		{[]string{"--log-level=info", "stray", "--listen=:1"}, `unexpected argument "stray"`},
		{[]string{"--log-level=loud"}, "--log-level"},
		{[]string{"--sync-budget=0s"}, "--sync-budget must be positive"},
		{[]string{"--certificate-projection-grace=0s"}, "--certificate-projection-grace must be positive"},
		{[]string{"--shutdown-timeout=-1s"}, "--shutdown-timeout must not be negative"},
		{[]string{"--listen="}, "--listen must not be empty"},
		{[]string{"--tls-cert-file=/etc/hooks/tls.crt"}, "--tls-cert-file needs --tls-key-file"},
		{[]string{"--tls-key-file=/etc/hooks/tls.key"}, "--tls-key-file needs --tls-cert-file"},
		{[]string{"--client-ca-file=/etc/hooks/ca.crt", "--auth-token-file=/etc/hooks/token"}, "--client-ca-file needs HTTPS"},
		{[]string{"--metrics-auth"}, "--metrics-auth needs --auth-token-file or --client-ca-file"},
		{[]string{"--credentials-reload-interval=0s"}, "--credentials-reload-interval must be positive"},
		{[]string{"--agent-image="}, "--agent-image must not be empty"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, stdout, stderr := runMain(t, tc.args...)
			if code != 2 {
				t.Errorf("exit code %d, want 2", code)
			}
			if !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "--help") {
				t.Errorf("stderr %q does not say %q and point to --help", stderr, tc.want)
			}
			if stdout != "" {
				t.Errorf("stdout %q, want nothing", stdout)
			}
		})
	}
}

// A port already taken fails at once with exit 1, naming the flag and the address.
func TestBindFailureNamesTheAddress(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	addr := taken.Addr().String()
	for _, args := range [][]string{
		{"--listen=" + addr, "--metrics-listen="},
		{"--listen=127.0.0.1:0", "--metrics-listen=" + addr},
	} {
		start := time.Now()
		code, _, stderr := runMain(t, args...)
		flagName := strings.SplitN(args[0], "=", 2)[0]
		if strings.HasSuffix(args[1], addr) {
			flagName = "--metrics-listen"
		}
		if code != 1 || !strings.Contains(stderr, flagName+" "+addr) || !strings.Contains(stderr, "address already in use") {
			t.Errorf("%v: exit %d, stderr %q; want 1 naming %s %s", args, code, stderr, flagName, addr)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("%v: took %s to fail", args, d)
		}
	}
}

// "serving hooks" is logged once the listeners exist: the addresses it names answer at once.
// The metrics have their own listener; SIGTERM ends the process cleanly.
func TestServesOnceLoggedAndStopsOnSIGTERM(t *testing.T) {
	cmd, lines, stderr := startLogging(t, "--listen=127.0.0.1:0", "--metrics-listen=127.0.0.1:0")
	var serving struct{ Msg, Listen, Metrics string }
	for lines.Scan() {
		if json.Unmarshal(lines.Bytes(), &serving) == nil && serving.Msg == "serving hooks" {
			break
		}
	}
	if serving.Listen == "" {
		t.Fatalf("no \"serving hooks\" line with the address (%v)", lines.Err())
	}
	go func() { _, _ = io.Copy(io.Discard, stderr) }()
	client := &http.Client{Timeout: 5 * time.Second}
	get := func(method, url string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(method, url, nil)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s right after \"serving hooks\": %v", method, url, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return resp
	}
	if resp := get(http.MethodGet, "http://"+serving.Listen+"/healthz"); resp.StatusCode != http.StatusOK {
		t.Errorf("GET /healthz = %d", resp.StatusCode)
	}
	if resp := get(http.MethodGet, "http://"+serving.Metrics+"/metrics"); resp.StatusCode != http.StatusOK {
		t.Errorf("GET /metrics on the metrics listener = %d", resp.StatusCode)
	}
	if resp := get(http.MethodGet, "http://"+serving.Listen+"/metrics"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /metrics on the hook listener = %d, want 404 (metrics have their own listener)", resp.StatusCode)
	}
	stopsOnSIGTERM(t, cmd)
}

// stopsOnSIGTERM sends the child SIGTERM and expects it to exit 0 within 20 s.
func stopsOnSIGTERM(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("after SIGTERM: %v, want exit 0", err)
		}
	case <-time.After(20 * time.Second):
		t.Error("still running 20s after SIGTERM")
	}
}

// --simulate binds loopback unless told otherwise, on ports of its own: not 127.0.0.1:8080,
// where kubectl without a kubeconfig looks for an API server.
func TestSimulateBindsLoopbackByDefault(t *testing.T) {
	for _, tc := range []struct {
		args                  []string
		listen, metricsListen string
	}{
		{nil, ":8080", ":9090"},
		{[]string{"--simulate"}, "127.0.0.1:18080", "127.0.0.1:19090"},
		{[]string{"--simulate", "--listen=:8081"}, ":8081", "127.0.0.1:19090"},
		{[]string{"--simulate", "--metrics-listen="}, "127.0.0.1:18080", ""},
	} {
		o, err := parseFlags(tc.args, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if o.listen != tc.listen || o.metricsListen != tc.metricsListen {
			t.Errorf("%v: listen %q, metrics %q; want %q and %q", tc.args, o.listen, o.metricsListen, tc.listen, tc.metricsListen)
		}
	}
}

// Every line on stderr is one JSON object with one level key, net/http's own lines included: a
// client that speaks plain HTTP to the HTTPS listener is logged as a warning, not as plain text.
func TestEveryLogLineIsJSONWithOneLevel(t *testing.T) {
	flags, _ := hookFiles(t)
	cmd, lines, _ := startLogging(t, append([]string{"--listen=127.0.0.1:0", "--metrics-listen="}, flags...)...)
	var all []string
	var serving struct{ Msg, Listen string }
	for serving.Listen == "" && lines.Scan() {
		all = append(all, lines.Text())
		_ = json.Unmarshal(lines.Bytes(), &serving)
	}
	if serving.Listen == "" {
		t.Fatalf("no \"serving hooks\" line (%v)", lines.Err())
	}
	resp, err := http.Get("http://" + serving.Listen + "/healthz")
	if err == nil {
		resp.Body.Close()
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for lines.Scan() {
		all = append(all, lines.Text())
	}
	_ = cmd.Wait()
	handshake := false
	for _, line := range all {
		levels, err := topLevelKeyCount(line, "level")
		if err != nil || levels != 1 {
			t.Errorf("line %q: %d level keys (%v), want a JSON object with one", line, levels, err)
		}
		if strings.Contains(line, "TLS handshake error") {
			handshake = strings.Contains(line, `"level":"WARN"`)
		}
	}
	if !handshake {
		t.Errorf("no warning about the plain-HTTP client's TLS handshake in %q", all)
	}
}

// topLevelKeyCount counts how often key appears among the keys of the JSON object line.
func topLevelKeyCount(line, key string) (int, error) {
	dec := json.NewDecoder(strings.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return 0, errors.New("not a JSON object")
	}
	n := 0
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return n, err
		}
		if k == key {
			n++
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return n, err
		}
	}
	return n, nil
}

// A file flag whose file cannot be read or parsed is a command line that cannot run: exit 2,
// naming the flag (FileError), whichever file flag it is.
func TestFileFlagErrorsExitTwoNamingTheFlag(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.pem")
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(garbage, []byte("not PEM"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "nonexistent")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--tls-cert-file=" + missing, "--tls-key-file=" + garbage}, "--tls-cert-file: open " + missing + ": no such file or directory"},
		{[]string{"--tls-cert-file=" + garbage, "--tls-key-file=" + missing}, "--tls-key-file: open " + missing},
		{[]string{"--tls-cert-file=" + garbage, "--tls-key-file=" + garbage}, "--tls-cert-file: " + garbage + " and " + garbage + ": tls:"},
		{[]string{"--auth-token-file=" + missing}, "--auth-token-file: open " + missing},
		{[]string{"--auth-token-file=" + empty}, "--auth-token-file: " + empty + ": is empty"},
		{[]string{"--client-ca-file=" + garbage, "--tls-cert-file=" + missing, "--tls-key-file=" + missing}, "--tls-cert-file: open " + missing},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, stderr := runMain(t, append(tc.args, "--listen=127.0.0.1:0", "--metrics-listen=")...)
			if code != 2 {
				t.Errorf("exit code %d, want 2 (stderr %q)", code, stderr)
			}
			if !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "--help") {
				t.Errorf("stderr %q does not say %q and point to --help", stderr, tc.want)
			}
		})
	}
}

// --help shows the agent subcommand beside the hook's own usage, and names every flag's value
// by its type (a backquoted word in a flag's usage would replace it).
func TestHelpNamesTheAgentAndEachValueType(t *testing.T) {
	code, stdout, _ := runMain(t, "--help")
	if code != 0 {
		t.Fatalf("--help exited %d", code)
	}
	for _, want := range []string{
		"Usage: memgraph-hooks [flags]\n",
		"\n       memgraph-hooks agent [flags] ",
		"\n  -agent-image string\n",
		"\n  -listen string\n",
		"\n  -version\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("--help lacks %q:\n%s", want, stdout)
		}
	}
	for _, m := range regexp.MustCompile(`(?m)^  -[a-z-]+ (.+)$`).FindAllStringSubmatch(stdout, -1) {
		if !slices.Contains([]string{"string", "duration", "int", "value"}, m[1]) {
			t.Errorf("a flag's value is named %q, not by its type: %s", m[1], m[0])
		}
	}
}

// --version prints one line, the command, its module version and its commit, and exits 0: for
// the hook and for its agent subcommand.
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"agent", "--version"}, {"--version", "--listen=:1"}} {
		code, stdout, stderr := runMain(t, args...)
		want := regexp.MustCompile(`^memgraph-hooks( agent)? version \S+, commit \S+( \(modified\))?, go1\.\S+\n$`)
		if code != 0 || stderr != "" || !want.MatchString(stdout) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 0 and one version line", args, code, stdout, stderr)
		}
	}
}

// The files the flags name are read before any port is bound: a command line with an unusable
// file exits 2 naming that flag, even when a port it names is taken too.
func TestFilesAreCheckedBeforePortsAreBound(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	missing := filepath.Join(t.TempDir(), "token")
	code, _, stderr := runMain(t, "--listen="+taken.Addr().String(), "--metrics-listen=", "--auth-token-file="+missing)
	if code != 2 || !strings.Contains(stderr, "--auth-token-file: open "+missing) || strings.Contains(stderr, "address already in use") {
		t.Errorf("exit %d, stderr %q; want 2 naming --auth-token-file and not the port", code, stderr)
	}
}

// --simulate says what to try next, and the command it names works: posting the example request
// to the address it serves on registers the simulated cluster.
func TestSimulateSaysWhatToTryNext(t *testing.T) {
	cmd, lines, stderr := startLogging(t, "--simulate", "--listen=127.0.0.1:0", "--metrics-listen=")
	var hint struct{ Msg, Try string }
	for hint.Try == "" && lines.Scan() {
		_ = json.Unmarshal(lines.Bytes(), &hint)
	}
	go func() { _, _ = io.Copy(io.Discard, stderr) }()
	m := regexp.MustCompile(`^curl -s (127\.0\.0\.1:\d+)/sync -d @(\S+) \| jq \.status$`).FindStringSubmatch(hint.Try)
	if m == nil || !strings.Contains(hint.Msg, "Debugging with curl") {
		t.Fatalf("no line saying what to try next, with a curl command and the walk-through: %+v", hint)
	}
	body, err := os.Open(filepath.Join("../..", m[2]))
	if err != nil {
		t.Fatalf("the request file the hint names: %v", err)
	}
	defer body.Close()
	resp, err := http.Post("http://"+m[1]+"/sync", "application/json", body)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ Status struct{ Main, Leader string } }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK || out.Status.Main == "" || out.Status.Leader == "" {
		t.Errorf("POST %s: %d, %+v, %v; want the cluster registered with a MAIN and a leader", hint.Try, resp.StatusCode, out, err)
	}
	stopsOnSIGTERM(t, cmd)
}
