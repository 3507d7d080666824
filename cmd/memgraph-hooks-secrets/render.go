package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/memgraph-hooks/memgraph-hooks/internal/pki"
)

// secretReader returns the Secret namespace/name as the cluster holds it, nil when there is none.
type secretReader func(ctx context.Context, namespace, name string) (*corev1.Secret, error)

// part is one Secret the command writes: made anew, or kept as the cluster holds it.
type part struct {
	only string // its --only value
	name string
	make func(options, time.Time) (document, string, error)
	keep func(options, *corev1.Secret, time.Time) (string, error)
}

// document is one Secret as the YAML output holds it.
type document map[string]any

// parts are the Secrets the flags ask for, in the order they are written.
func (o options) parts() []part {
	all := []part{
		{"tls", o.tlsSecret, tlsSecret, keepTLS},
		{"token", o.tokenSecret, tokenSecret, keepToken},
	}
	if o.clientTLS {
		all = append(all, part{"client-tls", o.clientTLSSecret, clientTLSSecret, keepClientTLS})
	}
	var out []part
	for _, p := range all {
		if o.only == "" || o.only == p.only {
			out = append(out, p)
		}
	}
	return out
}

// run writes the Secrets the flags ask for to out, as YAML, and one line per Secret to log
// saying whether it was kept or made. read, when not nil, is asked for each Secret first: one
// that exists is written back as it is, or, when it cannot serve, refused with nothing written.
func run(ctx context.Context, o options, read secretReader, out, log io.Writer) error {
	now := time.Now()
	var docs []document
	var notes []string
	for _, p := range o.parts() {
		where := o.namespace + "/" + p.name
		var existing *corev1.Secret
		if read != nil {
			s, err := read(ctx, o.namespace, p.name)
			if err != nil {
				return fmt.Errorf("reading Secret %s, to keep it if it exists: %w\n"+
					"Point --kubeconfig or --context at the cluster; --rotate writes new Secrets without reading it", where, err)
			}
			existing = s
		}
		if existing != nil {
			note, err := p.keep(o, existing, now)
			if err != nil {
				return fmt.Errorf("Secret %s exists, but %w: nothing was written.\n"+
					"--rotate replaces it; then restart Metacontroller (docs/security.md, \"Rotating\")", where, err)
			}
			docs = append(docs, kept(existing))
			notes = append(notes, fmt.Sprintf("Secret %s exists: written back unchanged%s", where, note))
			continue
		}
		doc, note, err := p.make(o, now)
		if err != nil {
			return err
		}
		docs = append(docs, doc)
		notes = append(notes, fmt.Sprintf("Secret %s: new%s", where, note))
	}
	if err := writeDocuments(out, docs); err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintln(log, "memgraph-hooks-secrets:", n)
	}
	if o.rotate {
		fmt.Fprintln(log, "memgraph-hooks-secrets: new credentials: once every hook pod logs that it reloaded them, "+
			"restart Metacontroller, which reads them only when it starts (docs/security.md, \"Rotating\")")
	}
	return nil
}

func writeDocuments(w io.Writer, docs []document) error {
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

func tlsSecret(o options, now time.Time) (document, string, error) {
	ca, err := pki.NewAuthority(o.service+"."+o.namespace+" CA", o.validFor)
	if err != nil {
		return nil, "", err
	}
	pair, err := ca.Issue(pki.Leaf{CommonName: o.service + "." + o.namespace, DNSNames: o.dnsNames(), Server: true, Validity: o.validFor})
	if err != nil {
		return nil, "", err
	}
	return secret(o, o.tlsSecret, corev1.SecretTypeTLS, map[string][]byte{
		"tls.crt": pair.CertPEM, "tls.key": pair.KeyPEM, "ca.crt": ca.CertPEM,
	}), validUntil("a CA and a serving certificate", pair.Cert.NotAfter), nil
}

// clientTLSSecret holds the client certificate Metacontroller presents (endpointConfigs
// clientTLS reads tls.crt and tls.key) and, as ca.crt, the CA the hook verifies it with
// (--client-ca-file). The CA is its own, not the serving certificate's: whoever holds the hook's
// serving CA Secret cannot mint a client.
func clientTLSSecret(o options, now time.Time) (document, string, error) {
	ca, err := pki.NewAuthority(o.service+"."+o.namespace+" client CA", o.validFor)
	if err != nil {
		return nil, "", err
	}
	pair, err := ca.Issue(pki.Leaf{CommonName: "metacontroller", Client: true, Validity: o.validFor})
	if err != nil {
		return nil, "", err
	}
	return secret(o, o.clientTLSSecret, corev1.SecretTypeTLS, map[string][]byte{
		"tls.crt": pair.CertPEM, "tls.key": pair.KeyPEM, "ca.crt": ca.CertPEM,
	}), validUntil("a client CA and certificate", pair.Cert.NotAfter), nil
}

// tokenSecret holds 256 random bits, base64url-encoded: a valid RFC 6750 Bearer token.
func tokenSecret(o options, _ time.Time) (document, string, error) {
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return nil, "", err
	}
	token := []byte(base64.RawURLEncoding.EncodeToString(raw))
	return secret(o, o.tokenSecret, corev1.SecretTypeOpaque, map[string][]byte{
		"token": token, "accepted-tokens": token,
	}), " (a token of 256 random bits)", nil
}

func validUntil(what string, notAfter time.Time) string {
	return fmt.Sprintf(" (%s valid until %s)", what, notAfter.UTC().Format(time.DateOnly))
}

func secret(o options, name string, typ corev1.SecretType, data map[string][]byte) document {
	return secretDocument(o.namespace, name, map[string]string{"app.kubernetes.io/name": "memgraph-hooks", "app.kubernetes.io/component": "credentials"}, typ, data)
}

// kept is an existing Secret as the output writes it back: its name, namespace, labels, type
// and data, nothing the API server filled in.
func kept(s *corev1.Secret) document {
	return secretDocument(s.Namespace, s.Name, s.Labels, s.Type, s.Data)
}

func secretDocument(namespace, name string, labels map[string]string, typ corev1.SecretType, data map[string][]byte) document {
	encoded := map[string]any{}
	for k, v := range data {
		encoded[k] = base64.StdEncoding.EncodeToString(v)
	}
	meta := map[string]any{"name": name, "namespace": namespace}
	if len(labels) > 0 {
		meta["labels"] = labels
	}
	return document{"apiVersion": "v1", "kind": "Secret", "metadata": meta, "type": string(typ), "data": encoded}
}
