// Command memgraph-hooks-secrets writes the two Secrets the default install (manifests/) needs,
// as YAML for kubectl apply, for clusters without cert-manager:
//
//	go run ./cmd/memgraph-hooks-secrets | kubectl apply -f -
//
// memgraph-hooks-tls (kubernetes.io/tls) holds the hook's serving certificate for its Service
// and, as ca.crt, the CA that Metacontroller verifies it with (the CompositeController's
// endpointConfigs caBundle). memgraph-hooks-token holds the bearer token Metacontroller sends
// (endpointConfigs authorization, key token) and the tokens the hook accepts (--auth-token-file,
// key accepted-tokens, one per line): the same token, until a rotation lists two.
//
// The CA's private key signs the serving certificate and is then forgotten: it is never written,
// so nothing else can ever be signed with it. Rotating is running the command again.
package main

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/memgraph-hooks/memgraph-hooks/internal/pki"
)

type options struct {
	namespace, service, clusterDomain string
	tlsSecret, tokenSecret            string
	clientTLSSecret                   string
	clientTLS                         bool
	validFor                          time.Duration
	only                              string
}

func main() {
	o, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err == nil {
		err = render(o, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "memgraph-hooks-secrets:", err)
		os.Exit(2)
	}
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("memgraph-hooks-secrets", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, "Writes the hook's serving certificate, its CA and a bearer token as Secrets YAML:\n\n"+
			"  go run ./cmd/memgraph-hooks-secrets | kubectl apply -f -\n\nFlags:\n")
		fs.PrintDefaults()
	}
	fs.StringVar(&o.namespace, "namespace", "memgraph-hooks", "namespace of the hook's Service and of the Secrets")
	fs.StringVar(&o.service, "service", "memgraph-hooks", "name of the hook's Service (the certificate is for <service>.<namespace>[.svc[.<cluster-domain>]])")
	fs.StringVar(&o.clusterDomain, "cluster-domain", "cluster.local", "the cluster's DNS domain")
	fs.StringVar(&o.tlsSecret, "tls-secret", "memgraph-hooks-tls", "name of the kubernetes.io/tls Secret")
	fs.StringVar(&o.tokenSecret, "token-secret", "memgraph-hooks-token", "name of the token Secret")
	fs.DurationVar(&o.validFor, "valid-for", 365*24*time.Hour, "how long the CA and the serving certificate are valid")
	fs.BoolVar(&o.clientTLS, "client-tls", false, "also write the client certificate Metacontroller presents for mutual TLS, and its CA (manifests/components/mtls)")
	fs.StringVar(&o.clientTLSSecret, "client-tls-secret", "memgraph-hooks-client-tls", "name of the kubernetes.io/tls Secret of --client-tls")
	fs.StringVar(&o.only, "only", "", `write only one Secret: "tls", "token" (with cert-manager, only the token) or "client-tls"`)
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch {
	case fs.NArg() > 0:
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case o.only != "" && o.only != "tls" && o.only != "token" && o.only != "client-tls":
		return o, fmt.Errorf(`--only %q: want "tls", "token" or "client-tls"`, o.only)
	case o.validFor < time.Hour:
		return o, errors.New("--valid-for must be at least 1h")
	case o.namespace == "" || o.service == "" || o.tlsSecret == "" || o.tokenSecret == "" || o.clientTLSSecret == "":
		return o, errors.New("--namespace, --service, --tls-secret, --token-secret and --client-tls-secret must not be empty")
	}
	o.clientTLS = o.clientTLS || o.only == "client-tls"
	return o, nil
}

// dnsNames are the names Metacontroller may use for the hook: the service-form webhook URL is
// https://<service>.<namespace>:<port>/..., and the longer forms resolve to the same Service.
func (o options) dnsNames() []string {
	base := o.service + "." + o.namespace
	return []string{base, base + ".svc", base + ".svc." + o.clusterDomain}
}

func render(o options, w io.Writer) error {
	var docs []map[string]any
	for _, part := range []struct {
		name   string
		wanted bool
		make   func(options) (map[string]any, error)
	}{
		{"tls", true, tlsSecret},
		{"token", true, tokenSecret},
		{"client-tls", o.clientTLS, clientTLSSecret},
	} {
		if !part.wanted || (o.only != "" && o.only != part.name) {
			continue
		}
		s, err := part.make(o)
		if err != nil {
			return err
		}
		docs = append(docs, s)
	}
	for i, d := range docs {
		out, err := yaml.Marshal(d)
		if err != nil {
			return err
		}
		if i > 0 {
			if _, err := io.WriteString(w, "---\n"); err != nil {
				return err
			}
		}
		if _, err := w.Write(out); err != nil {
			return err
		}
	}
	return nil
}

func tlsSecret(o options) (map[string]any, error) {
	ca, err := pki.NewAuthority(o.service+"."+o.namespace+" CA", o.validFor)
	if err != nil {
		return nil, err
	}
	pair, err := ca.Issue(pki.Leaf{CommonName: o.service + "." + o.namespace, DNSNames: o.dnsNames(), Server: true, Validity: o.validFor})
	if err != nil {
		return nil, err
	}
	return secret(o, o.tlsSecret, "kubernetes.io/tls", map[string][]byte{
		"tls.crt": pair.CertPEM, "tls.key": pair.KeyPEM, "ca.crt": ca.CertPEM,
	}), nil
}

// clientTLSSecret holds the client certificate Metacontroller presents (endpointConfigs
// clientTLS reads tls.crt and tls.key) and, as ca.crt, the CA the hook verifies it with
// (--client-ca-file). The CA is its own, not the serving certificate's: whoever holds the hook's
// serving CA Secret cannot mint a client.
func clientTLSSecret(o options) (map[string]any, error) {
	ca, err := pki.NewAuthority(o.service+"."+o.namespace+" client CA", o.validFor)
	if err != nil {
		return nil, err
	}
	pair, err := ca.Issue(pki.Leaf{CommonName: "metacontroller", Client: true, Validity: o.validFor})
	if err != nil {
		return nil, err
	}
	return secret(o, o.clientTLSSecret, "kubernetes.io/tls", map[string][]byte{
		"tls.crt": pair.CertPEM, "tls.key": pair.KeyPEM, "ca.crt": ca.CertPEM,
	}), nil
}

// tokenSecret holds 256 random bits, base64url-encoded: a valid RFC 6750 Bearer token.
func tokenSecret(o options) (map[string]any, error) {
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return nil, err
	}
	token := []byte(base64.RawURLEncoding.EncodeToString(raw))
	return secret(o, o.tokenSecret, "Opaque", map[string][]byte{
		"token": token, "accepted-tokens": token,
	}), nil
}

func secret(o options, name, typ string, data map[string][]byte) map[string]any {
	encoded := map[string]any{}
	for k, v := range data {
		encoded[k] = base64.StdEncoding.EncodeToString(v)
	}
	return map[string]any{
		"apiVersion": "v1",
		"kind":       "Secret",
		"metadata": map[string]any{
			"name":      name,
			"namespace": o.namespace,
			"labels":    map[string]any{"app.kubernetes.io/name": "memgraph-hooks", "app.kubernetes.io/component": "credentials"},
		},
		"type": typ,
		"data": encoded,
	}
}
