//go:build e2e

package e2e_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/memgraph-hooks/memgraph-hooks/e2e/metacontroller"
	"github.com/memgraph-hooks/memgraph-hooks/hooks"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/serving"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/bolt"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

var podGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

const (
	hookNamespace = "memgraph-hooks"
	hookHost      = "memgraph-hooks.memgraph-hooks" // what the CompositeController's service form dials
)

var (
	secretsOnce sync.Once
	secretsOut  string
	secretsErr  error
)

// installHookSecrets runs the README's cert-manager-free path once:
//
//	go run ./cmd/memgraph-hooks-secrets | kubectl apply -f -
//
// into the namespace manifests/ installs the hook in.
func installHookSecrets(t *testing.T) {
	t.Helper()
	e := needEnv(t)
	secretsOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		if _, secretsErr = e.Kubectl(ctx, "apply", "-f", repoPath("manifests", "namespace.yaml")); secretsErr != nil {
			return
		}
		secretsOut, secretsErr = applyHookSecrets(ctx)
	})
	if secretsErr != nil {
		t.Fatalf("go run ./cmd/memgraph-hooks-secrets | kubectl apply -f -: %v", secretsErr)
	}
}

// applyHookSecrets runs `go run ./cmd/memgraph-hooks-secrets ARGS | kubectl apply -f -` against
// the test API server: the helper reads the Secrets that exist through the same kubeconfig.
func applyHookSecrets(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", append([]string{"run", "./cmd/memgraph-hooks-secrets"}, args...)...)
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "KUBECONFIG="+testEnv.Kubeconfig)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	yamlOut, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%w: %s", err, stderr.String())
	}
	return testEnv.KubectlStdin(ctx, yamlOut, "apply", "-f", "-")
}

// deployedArgs gives a hook what manifests/deployment.yaml gives the real one: every Secret volume
// of the Deployment is written out from the API server's copy at its mount path (under a
// temporary root), as the kubelet mounts it, and the hook container's arguments are returned with
// every path inside a mount moved under that root.
func deployedArgs(t *testing.T) []string {
	args, _ := projectedArgs(t, shippedDeployment(t))
	return args
}

// shippedDeployment is manifests/deployment.yaml.
func shippedDeployment(t *testing.T) appsv1.Deployment {
	t.Helper()
	var dep appsv1.Deployment
	if err := yaml.UnmarshalStrict(readFile(t, repoPath("manifests", "deployment.yaml")), &dep); err != nil {
		t.Fatal(err)
	}
	return dep
}

// projectedArgs is deployedArgs for the Deployment dep, and the kubelet's sync of the mounts:
// project writes the Secrets' current content again, each file replaced whole, as the kubelet's
// atomic writer does.
func projectedArgs(t *testing.T, dep appsv1.Deployment) (args []string, project func()) {
	t.Helper()
	installHookSecrets(t)
	root := t.TempDir()
	c := dep.Spec.Template.Spec.Containers[0]
	var mounts []string
	var volumes []secretMount
	for _, m := range c.VolumeMounts {
		for _, v := range dep.Spec.Template.Spec.Volumes {
			if v.Name == m.Name && v.Secret != nil {
				volumes = append(volumes, secretMount{dir: filepath.Join(root, m.MountPath), secret: v.Secret})
				mounts = append(mounts, m.MountPath)
			}
		}
	}
	project = func() {
		for _, v := range volumes {
			v.project(t, dep.Namespace)
		}
	}
	project()
	args = expandEnv(t, c)
	for i, a := range args {
		flag, value, ok := strings.Cut(a, "=")
		for _, m := range mounts {
			if ok && strings.HasPrefix(value, m+"/") {
				args[i] = flag + "=" + filepath.Join(root, value)
			}
		}
	}
	return args, project
}

// expandEnv is c's args with every $(NAME) of a variable c's env defines replaced by its value,
// as the kubelet expands them; one left unexpanded would reach the hook as written.
func expandEnv(t *testing.T, c corev1.Container) []string {
	t.Helper()
	var pairs []string
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			pairs = append(pairs, "$("+e.Name+")", e.Value)
		}
	}
	expand := strings.NewReplacer(pairs...)
	args := make([]string, len(c.Args))
	for i, a := range c.Args {
		if args[i] = expand.Replace(a); strings.Contains(args[i], "$(") {
			t.Fatalf("the Deployment's argument %q names a variable its container does not define", a)
		}
	}
	return args
}

// secretMount is a Secret volume of the Deployment at its directory under the test's root.
type secretMount struct {
	dir    string
	secret *corev1.SecretVolumeSource
}

func (m secretMount) project(t *testing.T, namespace string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := testEnv.Client.CoreV1().Secrets(namespace).Get(ctx, m.secret.SecretName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the Deployment mounts Secret %s: %v", m.secret.SecretName, err)
	}
	if err := os.MkdirAll(m.dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, it := range m.secret.Items {
		data, ok := s.Data[it.Key]
		if !ok {
			t.Fatalf("Secret %s has no key %s, which the Deployment mounts", m.secret.SecretName, it.Key)
		}
		path := filepath.Join(m.dir, it.Path)
		if err := os.WriteFile(path+".new", data, 0o400); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(path+".new", path); err != nil {
			t.Fatal(err)
		}
	}
}

// argValue is the value of --flag=value in args, "" when absent.
func argValue(args []string, flag string) string {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, flag+"="); ok {
			return v
		}
	}
	return ""
}

// deployedCredentials loads the Deployment's --tls-cert-file, --tls-key-file, --client-ca-file,
// --auth-token-file and --metrics-auth arguments (deployedArgs) with the hook's own code, for the
// in-process hook. It returns the credentials and the Config edit main makes with them.
func deployedCredentials(t *testing.T) (*serving.Credentials, func(hooks.Config) hooks.Config) {
	creds, security, _ := projectedCredentials(t, shippedDeployment(t))
	return creds, security
}

// projectedCredentials is deployedCredentials and the projection of its files (projectedArgs):
// project, then Credentials.Reload, is what the kubelet's sync and the hook's next re-read do.
func projectedCredentials(t *testing.T, dep appsv1.Deployment) (*serving.Credentials, func(hooks.Config) hooks.Config, func()) {
	t.Helper()
	args, project := projectedArgs(t, dep)
	creds, err := serving.LoadCredentials(serving.CredentialFiles{
		CertFile: argValue(args, "--tls-cert-file"), KeyFile: argValue(args, "--tls-key-file"),
		ClientCAFile: argValue(args, "--client-ca-file"), TokenFile: argValue(args, "--auth-token-file"),
	})
	if err != nil {
		t.Fatalf("the Deployment's credentials do not load: %v", err)
	}
	if !creds.TLS() || creds.Tokens() == nil {
		t.Fatalf("the Deployment does not serve HTTPS with a bearer token: %v", args)
	}
	protectMetrics := false
	for _, a := range args {
		protectMetrics = protectMetrics || a == "--metrics-auth" || a == "--metrics-auth=true"
	}
	return creds, func(cfg hooks.Config) hooks.Config {
		cfg.Token, cfg.ClientCertRequired, cfg.ProtectMetrics = creds.Tokens(), creds.ClientCertRequired(), protectMetrics
		return cfg
	}, project
}

// hookServer is the in-process hook behind a loopback HTTPS listener.
type hookServer struct {
	srv  *http.Server
	addr string
}

func serveHTTPS(t *testing.T, handler http.Handler, creds *serving.Credentials) *hookServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &hookServer{srv: &http.Server{Handler: handler, TLSConfig: creds.TLSConfig(), ReadHeaderTimeout: 5 * time.Second}, addr: ln.Addr().String()}
	go func() { _ = s.srv.ServeTLS(ln, "", "") }()
	return s
}

func (s *hookServer) Close() { _ = s.srv.Close() }

// hookSecret reads one key of one of the hook's Secrets.
func hookSecret(t *testing.T, name, key string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := testEnv.Client.CoreV1().Secrets(hookNamespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s.Data[key]
}

// hookClient calls the scenario's hook as Metacontroller reaches it (https://memgraph-hooks.
// memgraph-hooks), trusting the CA of the hook's Secret, but sends whatever Authorization the
// test chooses.
func (s *scenario) hookClient() *http.Client {
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(hookSecret(s.t, "memgraph-hooks-tls", "ca.crt")) {
		s.t.Fatal("memgraph-hooks-tls has no usable ca.crt")
	}
	var d net.Dialer
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: hookHost, MinVersion: tls.VersionTLS12},
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, s.hookAddr)
		},
	}}
}

// The helper's output applies cleanly, and applying a fresh run of it (a rotation) does too.
func TestHookSecretsHelperAppliesCleanly(t *testing.T) {
	installHookSecrets(t)
	for _, want := range []string{"secret/memgraph-hooks-tls", "secret/memgraph-hooks-token"} {
		if !strings.Contains(secretsOut, want) {
			t.Errorf("kubectl apply did not report %s:\n%s", want, secretsOut)
		}
	}
	before := hookSecret(t, "memgraph-hooks-token", "token")
	beforeCA := hookSecret(t, "memgraph-hooks-tls", "ca.crt")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// Run again, as a user repeating the README's install steps: nothing changes, so
	// Metacontroller, which read the CA and the token when it started, goes on trusting the hook.
	out, err := applyHookSecrets(ctx)
	if err != nil {
		t.Fatalf("applying a second run: %v", err)
	}
	if strings.Count(out, " unchanged") != 2 {
		t.Errorf("a second run changed the Secrets:\n%s", out)
	}
	if !bytes.Equal(before, hookSecret(t, "memgraph-hooks-token", "token")) || !bytes.Equal(beforeCA, hookSecret(t, "memgraph-hooks-tls", "ca.crt")) {
		t.Error("a second run replaced the token or the CA")
	}
	// --rotate makes new ones.
	out, err = applyHookSecrets(ctx, "--rotate")
	if err != nil {
		t.Fatalf("applying a rotation: %v", err)
	}
	if strings.Count(out, "configured") != 2 {
		t.Errorf("--rotate did not update both Secrets:\n%s", out)
	}
	if bytes.Equal(before, hookSecret(t, "memgraph-hooks-token", "token")) || bytes.Equal(beforeCA, hookSecret(t, "memgraph-hooks-tls", "ca.crt")) {
		t.Error("--rotate kept the token or the CA")
	}
	s, err := testEnv.Client.CoreV1().Secrets(hookNamespace).Get(ctx, "memgraph-hooks-tls", metav1.GetOptions{})
	if err != nil || s.Type != "kubernetes.io/tls" {
		t.Errorf("memgraph-hooks-tls: %v, type %q", err, s.Type)
	}
}

// The test Metacontroller, configured by the shipped CompositeController's endpointConfigs,
// calls the hook over HTTPS (verifying the hook's certificate with the CA from the Secret) and
// sends the token on every call; the hook refuses none of them.
func TestMetacontrollerCallsTheHookOverHTTPSWithTheToken(t *testing.T) {
	var mu sync.Mutex
	var calls, plain, withoutToken int
	// Read before the scenario starts: its Node decorator calls the hook at once.
	token := strings.TrimSpace(string(hookSecret(t, "memgraph-hooks-token", "token")))
	s := startScenarioWith(t, "https-token", func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			calls++
			if r.TLS == nil || r.TLS.ServerName != hookHost {
				plain++
			}
			if r.Header.Get("Authorization") != "Bearer "+token {
				withoutToken++
			}
			mu.Unlock()
			next.ServeHTTP(w, r)
		})
	})
	s.create("secure", "{}")
	s.declaredMembers(s.waitConverged("secure", convergeTimeout), 3, 2)
	mu.Lock()
	defer mu.Unlock()
	if calls == 0 || plain > 0 || withoutToken > 0 {
		t.Errorf("%d hook calls: %d not over TLS to %s, %d without the token", calls, plain, hookHost, withoutToken)
	}
	if strings.Contains(s.hookLog.String(), "refused an unauthenticated request") {
		t.Error("the hook refused a call of the test Metacontroller")
	}
	if strings.Contains(s.hookLog.String(), token) {
		t.Error("the token appears in the hook's log")
	}
}

// A sync without the token (or with a wrong one) is answered 401 and changes nothing: the hook
// dials no coordinator, although the same request with the token would scale the cluster.
func TestCallsWithoutTheTokenAreRefusedAndChangeNothing(t *testing.T) {
	s := startScenario(t, "no-token")
	const name = "guarded"
	s.create(name, "{}")
	s.waitConverged(name, convergeTimeout)
	s.mc.Pause()
	defer s.mc.Resume()
	versions := childVersions(t, s.ns)
	queries := len(s.world.Queries())
	body := s.syncRequest(name, `{"dataInstances":3}`)
	client := s.hookClient()
	token := strings.TrimSpace(string(hookSecret(t, "memgraph-hooks-token", "token")))
	post := func(path, auth string) (int, []byte) {
		req, err := http.NewRequest(http.MethodPost, "https://"+hookHost+":443"+path, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, out
	}
	for _, auth := range []string{"", "Bearer not-the-token-0123456789abcdef", "Basic " + token, "Bearer " + token + "x"} {
		code, out := post("/sync", auth)
		var e struct{ Error string }
		if code != http.StatusUnauthorized || json.Unmarshal(out, &e) != nil || e.Error == "" {
			t.Errorf("Authorization %.12q…: %d %s, want 401 with a JSON error", auth, code, out)
		}
	}
	if n := len(s.world.Queries()); n != queries {
		t.Errorf("refused calls reached Memgraph: %d queries before, %d after", queries, n)
	}
	// The control: with the token, the same request is answered with the data StatefulSet grown
	// to 3, which Metacontroller would apply.
	code, out := post("/sync?dryRun=true", "Bearer "+token)
	var resp struct {
		Children []struct {
			Metadata struct{ Name string }
			Spec     struct{ Replicas int }
		}
	}
	if err := json.Unmarshal(out, &resp); code != http.StatusOK || err != nil {
		t.Fatalf("the same request with the token: %d %s", code, out)
	}
	grown := false
	for _, c := range resp.Children {
		grown = grown || c.Metadata.Name == topology.DataSetName(name) && c.Spec.Replicas == 3
	}
	if !grown {
		t.Errorf("the same request with the token does not grow %s to 3: %s", topology.DataSetName(name), out)
	}
	if diff := cmp.Diff(versions, childVersions(t, s.ns)); diff != "" {
		t.Errorf("children changed (-before +after):\n%s", diff)
	}
}

// syncRequest is the v2 sync request Metacontroller would send for the named parent right now,
// with specPatch (a JSON object) merged into the parent's spec.
func (s *scenario) syncRequest(name, specPatch string) []byte {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	parent, err := s.get(ctx, name)
	if err != nil {
		s.t.Fatal(err)
	}
	var patch map[string]any
	if err := json.Unmarshal([]byte(specPatch), &patch); err != nil {
		s.t.Fatal(err)
	}
	for k, v := range patch {
		parent.Object["spec"].(map[string]any)[k] = v
	}
	objects := func(gvr schema.GroupVersionResource) map[string]any {
		list, err := testEnv.Dynamic.Resource(gvr).Namespace(s.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			s.t.Fatal(err)
		}
		out := map[string]any{}
		for _, it := range list.Items {
			out[it.GetNamespace()+"/"+it.GetName()] = it.Object
		}
		return out
	}
	out, err := json.Marshal(map[string]any{
		"controller": map[string]any{"kind": "CompositeController"},
		"parent":     parent.Object,
		"children":   map[string]any{"StatefulSet.apps/v1": objects(stsGVR), "Service.v1": objects(svcGVR)},
		"related":    map[string]any{"Pod.v1": objects(podGVR)},
		"finalizing": false,
	})
	if err != nil {
		s.t.Fatal(err)
	}
	return out
}

// A Metacontroller without the token (the CompositeController's authorization left out) gets
// 401 on every call and so creates nothing and writes no status.
func TestMetacontrollerWithoutTheTokenChangesNothing(t *testing.T) {
	installCRD(t)
	e := needEnv(t)
	ns := newNamespace(t, "anonymous")
	creds, security := deployedCredentials(t)
	pool := bolt.NewPool(bolt.PoolOptions{})
	t.Cleanup(func() { _ = pool.Close() })
	hook := serveHTTPS(t, hooks.NewHandler(security(hooks.Config{Connector: pool})), creds)
	t.Cleanup(hook.Close)
	cc, err := metacontroller.LoadCompositeController(repoPath("manifests"), clusterController)
	if err != nil {
		t.Fatal(err)
	}
	for i := range cc.EndpointConfigs {
		cc.EndpointConfigs[i].Authorization = nil
	}
	mc, err := metacontroller.New(metacontroller.Options{
		CC: cc, Dynamic: e.Dynamic, Discovery: e.Client.Discovery(), HookAddress: hook.addr,
		Namespace: ns, ResyncPeriod: scenarioResync, Logf: t.Logf,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := mc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer mc.Stop()
	since := time.Now()
	if _, err := mgcClient(ns).Create(ctx, mgcObject(t, ns, "anon", "{}"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = eventually(ctx, 100*time.Millisecond, func() error {
		failures := mc.Stats().Snapshot().HookFailures(since)
		if len(failures) < 3 {
			return fmt.Errorf("%d failed hook calls so far", len(failures))
		}
		for _, f := range failures {
			if f.Status != http.StatusUnauthorized {
				return fmt.Errorf("a hook call failed with %d, want 401", f.Status)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if v := childVersions(t, ns); len(v) != 0 {
		t.Errorf("children exist although every hook call was refused: %v", v)
	}
	parent, err := mgcClient(ns).Get(ctx, "anon", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if status := parent.Object["status"]; status != nil {
		t.Errorf("status written although every hook call was refused: %v", status)
	}
}

// The cert-manager component fits the default install: the serving Certificate writes the very
// Secret the Deployment mounts and the CompositeController trusts, for the name Metacontroller
// dials, signed by a CA Issuer whose CA a self-signed Issuer signs.
func TestCertManagerOverlayFitsTheInstall(t *testing.T) {
	e := needEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := e.Kubectl(ctx, "kustomize", repoPath("examples", "install-with-cert-manager"))
	if err != nil {
		t.Fatal(err)
	}
	objects := map[string]map[string]any{}
	for _, doc := range strings.Split(out, "\n---\n") {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatal(err)
		}
		meta, _ := obj["metadata"].(map[string]any)
		objects[fmt.Sprint(obj["kind"], "/", meta["name"])] = obj
	}
	get := func(key string, path ...string) any {
		var cur any = objects[key]
		for _, p := range path {
			m, _ := cur.(map[string]any)
			cur = m[p]
		}
		return cur
	}
	serving := "Certificate/memgraph-hooks-tls"
	secret := get(serving, "spec", "secretName")
	if ca := get("CompositeController/memgraph-hooks", "spec", "endpointConfigs"); !strings.Contains(fmt.Sprint(ca), fmt.Sprint("name:", secret)) {
		t.Errorf("the CompositeController does not trust Secret %v: %v", secret, ca)
	}
	if vols := get("Deployment/memgraph-hooks", "spec", "template", "spec", "volumes"); !strings.Contains(fmt.Sprint(vols), fmt.Sprint("secretName:", secret)) {
		t.Errorf("the Deployment does not mount Secret %v: %v", secret, vols)
	}
	if names := fmt.Sprint(get(serving, "spec", "dnsNames")); !strings.Contains(names, hookHost+" ") {
		t.Errorf("the serving certificate's names %s lack %s", names, hookHost)
	}
	caIssuer := fmt.Sprint(get(serving, "spec", "issuerRef", "name"))
	caSecret := get("Issuer/"+caIssuer, "spec", "ca", "secretName")
	var caCert string
	for key := range objects {
		if strings.HasPrefix(key, "Certificate/") && fmt.Sprint(get(key, "spec", "secretName")) == fmt.Sprint(caSecret) {
			caCert = key
		}
	}
	if caCert == "" || get(caCert, "spec", "isCA") != true {
		t.Fatalf("no CA Certificate behind Issuer %s (secret %v)", caIssuer, caSecret)
	}
	root := fmt.Sprint(get(caCert, "spec", "issuerRef", "name"))
	if get("Issuer/"+root, "spec", "selfSigned") == nil {
		t.Errorf("the CA is issued by %s, not a self-signed Issuer", root)
	}
}
