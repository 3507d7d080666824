package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// renewWithin is how close to its expiry a kept certificate is called out.
const renewWithin = 30 * 24 * time.Hour

// keepTLS accepts an existing serving Secret the hook and Metacontroller can use as it is: a
// kubernetes.io/tls Secret whose tls.crt and tls.key are a pair, and whose certificate verifies
// against its ca.crt, now, for every name Metacontroller may dial. It returns a note on its
// validity.
func keepTLS(o options, s *corev1.Secret, now time.Time) (string, error) {
	leaf, roots, err := tlsPair(s)
	if err != nil {
		return "", err
	}
	for _, name := range o.dnsNames() {
		_, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: name, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
		if err != nil {
			return "", fmt.Errorf("its certificate does not serve %s: %w", name, err)
		}
	}
	return expiryNote("its serving certificate", leaf.NotAfter, now), nil
}

// keepClientTLS accepts an existing client Secret whose certificate verifies against its ca.crt,
// now, for client authentication.
func keepClientTLS(_ options, s *corev1.Secret, now time.Time) (string, error) {
	leaf, roots, err := tlsPair(s)
	if err != nil {
		return "", err
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		return "", fmt.Errorf("its certificate is no client certificate of its ca.crt: %w", err)
	}
	return expiryNote("its client certificate", leaf.NotAfter, now), nil
}

// keepToken accepts an existing token Secret whose token the hook accepts: it is among the
// lines of accepted-tokens. A Secret without accepted-tokens gets it, with the token's value
// (what the hook's pods wait for to start).
func keepToken(_ options, s *corev1.Secret, _ time.Time) (string, error) {
	token := bytes.TrimSpace(s.Data["token"])
	if len(token) == 0 {
		return "", errors.New("it has no key token, the token Metacontroller sends")
	}
	accepted, ok := s.Data["accepted-tokens"]
	if !ok {
		s.Data["accepted-tokens"] = token
		return ", but for the key accepted-tokens, added with the token's value", nil
	}
	if !slices.Contains(strings.Fields(string(accepted)), string(token)) {
		return "", errors.New("its token is not among its accepted-tokens: the hook would refuse every call Metacontroller makes")
	}
	return "", nil
}

// tlsPair is the certificate of a kubernetes.io/tls Secret whose tls.crt and tls.key are a pair,
// and the CAs of its ca.crt.
func tlsPair(s *corev1.Secret) (*x509.Certificate, *x509.CertPool, error) {
	if s.Type != corev1.SecretTypeTLS {
		return nil, nil, fmt.Errorf("it is of type %q, not %s", s.Type, corev1.SecretTypeTLS)
	}
	for _, key := range []string{"tls.crt", "tls.key", "ca.crt"} {
		if len(s.Data[key]) == 0 {
			return nil, nil, fmt.Errorf("it has no key %s", key)
		}
	}
	pair, err := tls.X509KeyPair(s.Data["tls.crt"], s.Data["tls.key"])
	if err != nil {
		return nil, nil, fmt.Errorf("its tls.crt and tls.key are no pair: %w", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(s.Data["ca.crt"]) {
		return nil, nil, errors.New("its ca.crt holds no PEM certificate")
	}
	return pair.Leaf, roots, nil
}

// expiryNote says until when what is valid, and whether to rotate soon.
func expiryNote(what string, notAfter, now time.Time) string {
	note := fmt.Sprintf(" (%s is valid until %s)", what, notAfter.UTC().Format(time.DateOnly))
	if notAfter.Sub(now) < renewWithin {
		note += fmt.Sprintf("; it expires in %d days: rotate it soon (--rotate, docs/security.md, \"Rotating\")", int(notAfter.Sub(now).Hours()/24))
	}
	return note
}
