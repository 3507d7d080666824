package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// clusterOf is a cluster holding secrets as the API server returns them: with the fields it
// fills in and the annotation kubectl apply leaves.
func clusterOf(secrets map[string]corev1.Secret) secretReader {
	return func(_ context.Context, namespace, name string) (*corev1.Secret, error) {
		s, ok := secrets[name]
		if !ok || s.Namespace != namespace {
			return nil, nil
		}
		s = *s.DeepCopy()
		s.UID, s.ResourceVersion = "4a1c", "817"
		s.CreationTimestamp = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		s.Annotations = map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{}"}
		s.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl-client-side-apply"}}
		return &s, nil
	}
}

func dataOf(secrets map[string]corev1.Secret) map[string]map[string][]byte {
	out := map[string]map[string][]byte{}
	for name, s := range secrets {
		out[name] = s.Data
	}
	return out
}

// Run a second time, it writes every Secret back as the cluster holds it, CA and token
// included, so `| kubectl apply -f -` changes nothing; and it says so.
func TestRunTwiceKeepsTheCAAndTheToken(t *testing.T) {
	first := generate(t, "--client-tls")
	second, log := runOn(t, clusterOf(first), "--client-tls")
	if diff := cmp.Diff(dataOf(first), dataOf(second)); diff != "" {
		t.Errorf("the second run changed the Secrets (-first +second):\n%s", diff)
	}
	for _, name := range []string{"memgraph-hooks-tls", "memgraph-hooks-token", "memgraph-hooks-client-tls"} {
		if !strings.Contains(log, "Secret memgraph-hooks/"+name+" exists: written back unchanged") {
			t.Errorf("stderr does not say %s was kept:\n%s", name, log)
		}
	}
	if !strings.Contains(log, "serving certificate is valid until") {
		t.Errorf("stderr does not say until when the kept certificate is valid:\n%s", log)
	}
	var out bytes.Buffer
	o, _ := parseFlags(nil, &out)
	if err := run(context.Background(), o, clusterOf(first), &out, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	for _, doc := range strings.Split(out.String(), "---\n") {
		var obj struct{ Metadata map[string]any }
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatal(err)
		}
		for key := range obj.Metadata {
			if key != "name" && key != "namespace" && key != "labels" {
				t.Errorf("a kept Secret is written with metadata.%s, which the API server filled in", key)
			}
		}
	}
}

// --rotate makes new Secrets without reading the cluster, and says Metacontroller needs a restart.
func TestRotateMakesNewSecrets(t *testing.T) {
	first := generate(t)
	o, err := parseFlags([]string{"--rotate"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	var out, log bytes.Buffer
	if err := run(context.Background(), o, nil, &out, &log); err != nil {
		t.Fatal(err)
	}
	rotated := decodeSecrets(t, &out)
	for _, name := range []string{"memgraph-hooks-tls", "memgraph-hooks-token"} {
		for key, value := range first[name].Data {
			if bytes.Equal(rotated[name].Data[key], value) {
				t.Errorf("--rotate kept %s's %s", name, key)
			}
		}
	}
	if !strings.Contains(log.String(), "restart Metacontroller") {
		t.Errorf("--rotate does not say to restart Metacontroller: %s", log.String())
	}
	if _, err := parseFlags([]string{"--rotate", "--context", "prod"}, &bytes.Buffer{}); err == nil {
		t.Error("--rotate with --context accepted: it reads nothing")
	}
}

// Only the Secrets that are missing are made; the others are kept. A token Secret that lacks
// accepted-tokens gets it, with the token's value.
func TestMissingSecretsAreMadeTheOthersKept(t *testing.T) {
	first := generate(t)
	onlyTLS := map[string]corev1.Secret{"memgraph-hooks-tls": first["memgraph-hooks-tls"]}
	second, log := runOn(t, clusterOf(onlyTLS))
	if !bytes.Equal(second["memgraph-hooks-tls"].Data["ca.crt"], first["memgraph-hooks-tls"].Data["ca.crt"]) {
		t.Error("the existing CA was replaced")
	}
	if bytes.Equal(second["memgraph-hooks-token"].Data["token"], first["memgraph-hooks-token"].Data["token"]) || len(second["memgraph-hooks-token"].Data["token"]) == 0 {
		t.Error("no new token was made")
	}
	if !strings.Contains(log, "Secret memgraph-hooks/memgraph-hooks-token: new") {
		t.Errorf("stderr does not say the token is new:\n%s", log)
	}

	token := first["memgraph-hooks-token"]
	token.Data = map[string][]byte{"token": token.Data["token"]}
	repaired, log := runOn(t, clusterOf(map[string]corev1.Secret{"memgraph-hooks-token": token}), "--only", "token")
	got := repaired["memgraph-hooks-token"].Data
	if !bytes.Equal(got["accepted-tokens"], got["token"]) || !bytes.Equal(got["token"], token.Data["token"]) {
		t.Errorf("token Secret without accepted-tokens written as %q", got)
	}
	if !strings.Contains(log, "accepted-tokens, added with the token's value") {
		t.Errorf("stderr does not say accepted-tokens was added:\n%s", log)
	}
}

// A Secret that exists but cannot serve is refused, naming what is wrong and --rotate, and
// nothing is written, not even the Secrets before it.
func TestUnusableSecretsAreRefused(t *testing.T) {
	good := generate(t, "--client-tls")
	otherService := generate(t, "--service", "elsewhere")
	edit := func(name string, change func(s *corev1.Secret)) map[string]corev1.Secret {
		out := map[string]corev1.Secret{}
		for n, s := range good {
			out[n] = *s.DeepCopy()
		}
		s := out[name]
		change(&s)
		out[name] = s
		return out
	}
	for _, tc := range []struct {
		name    string
		cluster map[string]corev1.Secret
		want    string
	}{
		{"no ca.crt", edit("memgraph-hooks-tls", func(s *corev1.Secret) { delete(s.Data, "ca.crt") }), "memgraph-hooks-tls exists, but it has no key ca.crt"},
		{"Opaque", edit("memgraph-hooks-tls", func(s *corev1.Secret) { s.Type = corev1.SecretTypeOpaque }), `it is of type "Opaque", not kubernetes.io/tls`},
		{"not a pair", edit("memgraph-hooks-tls", func(s *corev1.Secret) { s.Data["tls.key"] = good["memgraph-hooks-client-tls"].Data["tls.key"] }), "its tls.crt and tls.key are no pair"},
		{"another CA", edit("memgraph-hooks-tls", func(s *corev1.Secret) { s.Data["ca.crt"] = good["memgraph-hooks-client-tls"].Data["ca.crt"] }), "its certificate does not serve memgraph-hooks.memgraph-hooks"},
		{"another Service", edit("memgraph-hooks-tls", func(s *corev1.Secret) { s.Data = otherService["memgraph-hooks-tls"].Data }), "its certificate does not serve memgraph-hooks.memgraph-hooks"},
		{"no token", edit("memgraph-hooks-token", func(s *corev1.Secret) { delete(s.Data, "token") }), "memgraph-hooks-token exists, but it has no key token"},
		{"token not accepted", edit("memgraph-hooks-token", func(s *corev1.Secret) { s.Data["accepted-tokens"] = []byte("another-token-of-enough-length") }), "its token is not among its accepted-tokens"},
		{"client certificate of another CA", edit("memgraph-hooks-client-tls", func(s *corev1.Secret) { s.Data["ca.crt"] = good["memgraph-hooks-tls"].Data["ca.crt"] }), "its certificate is no client certificate of its ca.crt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, _ := parseFlags([]string{"--client-tls"}, &bytes.Buffer{})
			var out bytes.Buffer
			err := run(context.Background(), o, clusterOf(tc.cluster), &out, &bytes.Buffer{})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "--rotate replaces it") {
				t.Errorf("error %v; want one saying %q and naming --rotate", err, tc.want)
			}
			if out.Len() > 0 {
				t.Errorf("wrote %d bytes after refusing", out.Len())
			}
		})
	}
}

// A kept certificate that has expired is refused; one that expires within 30 days is kept with
// a call to rotate it.
func TestKeptCertificatesExpiry(t *testing.T) {
	s := generate(t, "--valid-for", "720h")["memgraph-hooks-tls"]
	o, _ := parseFlags(nil, &bytes.Buffer{})
	note, err := keepTLS(o, &s, time.Now())
	if err != nil || !strings.Contains(note, "expires in 29 days: rotate it soon") {
		t.Errorf("a certificate valid for 30 days: note %q, error %v", note, err)
	}
	if _, err := keepTLS(o, &s, time.Now().Add(31*24*time.Hour)); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Errorf("an expired certificate: error %v, want it refused as expired", err)
	}
	long := generate(t)["memgraph-hooks-tls"]
	if note, err := keepTLS(o, &long, time.Now()); err != nil || strings.Contains(note, "rotate") {
		t.Errorf("a certificate valid for a year: note %q, error %v", note, err)
	}
}

// A cluster that cannot be read stops the command before it writes anything, naming --rotate.
func TestUnreadableClusterWritesNothing(t *testing.T) {
	o, _ := parseFlags(nil, &bytes.Buffer{})
	var out bytes.Buffer
	unreachable := func(context.Context, string, string) (*corev1.Secret, error) {
		return nil, errors.New(`Get "https://127.0.0.1:6443/api/v1/namespaces/memgraph-hooks/secrets/memgraph-hooks-tls": connection refused`)
	}
	err := run(context.Background(), o, unreachable, &out, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "connection refused") || !strings.Contains(err.Error(), "--rotate writes new Secrets without reading it") {
		t.Errorf("error %v", err)
	}
	if out.Len() > 0 {
		t.Errorf("wrote %d bytes", out.Len())
	}
}
