package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// generate runs the command with args on a cluster that holds no Secret yet.
func generate(t *testing.T, args ...string) map[string]corev1.Secret {
	t.Helper()
	secrets, _ := runOn(t, nothing, args...)
	return secrets
}

// runOn runs the command with args on a cluster whose Secrets read returns, and returns the
// Secrets it wrote and what it said on stderr.
func runOn(t *testing.T, read secretReader, args ...string) (map[string]corev1.Secret, string) {
	t.Helper()
	o, err := parseFlags(args, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.rotate {
		read = nil
	}
	var out, log bytes.Buffer
	if err := run(context.Background(), o, read, &out, &log); err != nil {
		t.Fatal(err)
	}
	return decodeSecrets(t, &out), log.String()
}

// nothing is a cluster without any Secret.
func nothing(context.Context, string, string) (*corev1.Secret, error) { return nil, nil }

func decodeSecrets(t *testing.T, out io.Reader) map[string]corev1.Secret {
	t.Helper()
	secrets := map[string]corev1.Secret{}
	dec := utilyaml.NewYAMLOrJSONDecoder(out, 4096)
	for {
		var s corev1.Secret
		if err := dec.Decode(&s); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		secrets[s.Name] = s
	}
	return secrets
}

// The default output is what manifests/ expects: a kubernetes.io/tls Secret whose certificate
// verifies against its ca.crt for every name Metacontroller may use, and a token Secret whose
// token can travel as a Bearer token.
func TestDefaultSecretsFitTheManifests(t *testing.T) {
	secrets := generate(t)
	tlsSecret, ok := secrets["memgraph-hooks-tls"]
	if !ok || tlsSecret.Namespace != "memgraph-hooks" || tlsSecret.Type != corev1.SecretTypeTLS {
		t.Fatalf("TLS Secret: %+v", tlsSecret.ObjectMeta)
	}
	pair, err := tls.X509KeyPair(tlsSecret.Data["tls.crt"], tlsSecret.Data["tls.key"])
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(tlsSecret.Data["ca.crt"]) {
		t.Fatal("ca.crt holds no certificate")
	}
	for _, name := range []string{"memgraph-hooks.memgraph-hooks", "memgraph-hooks.memgraph-hooks.svc", "memgraph-hooks.memgraph-hooks.svc.cluster.local"} {
		if _, err := pair.Leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: name, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if left := time.Until(pair.Leaf.NotAfter); left < 364*24*time.Hour {
		t.Errorf("serving certificate valid for %s, want a year", left)
	}
	if bytes.Contains(tlsSecret.Data["ca.crt"], []byte("PRIVATE KEY")) {
		t.Error("the CA's private key was written")
	}
	token := secrets["memgraph-hooks-token"].Data["token"]
	if !regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`).Match(token) {
		t.Errorf("token %d bytes is not 256 bits of base64url", len(token))
	}
	if accepted := secrets["memgraph-hooks-token"].Data["accepted-tokens"]; !bytes.Equal(accepted, token) {
		t.Errorf("the hook accepts %q, Metacontroller sends %q", accepted, token)
	}
	if again := generate(t)["memgraph-hooks-token"].Data["token"]; bytes.Equal(again, token) {
		t.Error("two runs produced the same token")
	}
}

func TestFlagsShapeTheSecrets(t *testing.T) {
	secrets := generate(t, "--namespace", "ops", "--service", "hook", "--cluster-domain", "corp.internal", "--only", "tls", "--valid-for", "48h")
	s, ok := secrets["memgraph-hooks-tls"]
	if len(secrets) != 1 || !ok || s.Namespace != "ops" {
		t.Fatalf("--only tls wrote %v", secrets)
	}
	block := pemCert(t, s.Data["tls.crt"])
	if got := strings.Join(block.DNSNames, ","); got != "hook.ops,hook.ops.svc,hook.ops.svc.corp.internal" {
		t.Errorf("DNS names %s", got)
	}
	if left := time.Until(block.NotAfter); left > 49*time.Hour {
		t.Errorf("valid for %s, want 48h", left)
	}
	if only := generate(t, "--only", "token"); len(only) != 1 || only["memgraph-hooks-token"].Name == "" {
		t.Errorf("--only token wrote %v", only)
	}
	for _, bad := range [][]string{{"--only", "ca"}, {"--valid-for", "1m"}, {"--namespace", ""}, {"extra"}} {
		if _, err := parseFlags(bad, io.Discard); err == nil {
			t.Errorf("parseFlags(%q) accepted", bad)
		}
	}
}

// --client-tls adds the Secret manifests/components/mtls mounts and Metacontroller presents: a
// client certificate that verifies against its own ca.crt for client authentication only, and a
// CA that is not the serving certificate's.
func TestClientTLSSecretFitsTheMTLSComponent(t *testing.T) {
	if secrets := generate(t); len(secrets) != 2 {
		t.Errorf("without --client-tls: %d Secrets, want 2", len(secrets))
	}
	secrets := generate(t, "--client-tls")
	client, ok := secrets["memgraph-hooks-client-tls"]
	if !ok || len(secrets) != 3 || client.Type != corev1.SecretTypeTLS || client.Namespace != "memgraph-hooks" {
		t.Fatalf("--client-tls wrote %d Secrets; client TLS Secret %+v", len(secrets), client.ObjectMeta)
	}
	pair, err := tls.X509KeyPair(client.Data["tls.crt"], client.Data["tls.key"])
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(client.Data["ca.crt"]) {
		t.Fatal("ca.crt holds no certificate")
	}
	if _, err := pair.Leaf.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("the client certificate does not verify for client authentication: %v", err)
	}
	if _, err := pair.Leaf.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err == nil {
		t.Error("the client certificate is also a server certificate")
	}
	if bytes.Equal(client.Data["ca.crt"], secrets["memgraph-hooks-tls"].Data["ca.crt"]) {
		t.Error("the client CA is the serving CA")
	}
	if only := generate(t, "--only", "client-tls"); len(only) != 1 || only["memgraph-hooks-client-tls"].Name == "" {
		t.Errorf("--only client-tls wrote %v", only)
	}
}

func pemCert(t *testing.T, data []byte) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode(data)
	if block == nil {
		t.Fatal("tls.crt is not PEM")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}
