package metacontroller

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Connection settings of webhooks, as Metacontroller v4.17 resolves them (pkg/hooks/
// endpoint_config.go, cabundle.go, auth.go, webhook.go): a hook's own caBundle, clientTLS and
// authorization win as a whole; otherwise the first spec.endpointConfigs entry whose host matches
// the hook URL's host applies. Secrets are read once, when the controller starts.

// EndpointConfig is a spec.endpointConfigs entry, or the same fields set on a webhook.
type EndpointConfig struct {
	Host          string          `json:"host"`
	CABundle      *CABundle       `json:"caBundle"`
	ClientTLS     *ClientTLS      `json:"clientTLS"`
	Authorization *Authorization  `json:"authorization"`
	BasicAuth     *map[string]any `json:"basicAuth"`
}

func (e *EndpointConfig) empty() bool {
	return e == nil || (e.CABundle == nil && e.ClientTLS == nil && e.Authorization == nil && e.BasicAuth == nil)
}

// KeyRef selects a key of a Secret or ConfigMap.
type KeyRef struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	Key       string `json:"key"`
}

type CABundle struct {
	Inline       *string `json:"inline"`
	SecretRef    *KeyRef `json:"secretRef"`
	ConfigMapRef *KeyRef `json:"configMapRef"`
}

type ClientTLS struct {
	SecretRef     KeyRef `json:"secretRef"`
	CertKey       string `json:"certKey"`
	PrivateKeyKey string `json:"privateKeyKey"`
}

type Authorization struct {
	Type      string `json:"type"`
	SecretRef KeyRef `json:"secretRef"`
}

// webhookURL builds the URL Metacontroller calls: url as given, or the service form
// <protocol>://<name>.<namespace>:<port><path> (port 80, protocol http by default).
func webhookURL(w *rawWebhook) (string, error) {
	if w.URL != nil {
		return *w.URL, nil
	}
	if w.Service == nil || w.Path == nil {
		return "", errors.New("must specify either a full 'url', or both 'service' and 'path'")
	}
	if w.Service.Name == "" || w.Service.Namespace == "" {
		return "", errors.New("'service' must specify both 'name' and 'namespace'")
	}
	port, protocol := int32(80), "http"
	if w.Service.Port != nil {
		port = *w.Service.Port
	}
	if w.Service.Protocol != nil {
		protocol = *w.Service.Protocol
	}
	return fmt.Sprintf("%s://%s.%s:%d%s", protocol, w.Service.Name, w.Service.Namespace, port, *w.Path), nil
}

// matchEndpointConfig returns the first entry whose host matches the URL's host, with or without
// the scheme's default port.
func matchEndpointConfig(rawURL string, configs []EndpointConfig) *EndpointConfig {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil
	}
	defaultPort := map[string]string{"https": "443", "http": "80"}[u.Scheme]
	canonical := u.Host
	if u.Port() == "" && defaultPort != "" {
		canonical = u.Hostname() + ":" + defaultPort
	}
	for i := range configs {
		h := configs[i].Host
		if strings.EqualFold(h, u.Host) || strings.EqualFold(h, canonical) ||
			(u.Port() != "" && u.Port() == defaultPort && strings.EqualFold(h, u.Hostname())) {
			return &configs[i]
		}
	}
	return nil
}

// hookClient is a resolved hook: where to POST, with which client and Authorization header.
type hookClient struct {
	url    string
	client *http.Client
	auth   string
}

var (
	secretsGVR    = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	configMapsGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

// resolveHook reads the hook's connection material from the API server and builds its client.
// Dial overrides the network address of every connection (cluster DNS, for a hook served on
// loopback); the URL's host is still what TLS verifies.
func (c *Controller) resolveHook(ctx context.Context, h *Hook) (*hookClient, error) {
	cfg := h.Endpoint
	if cfg.empty() {
		cfg = matchEndpointConfig(h.URL, c.cc.EndpointConfigs)
	}
	out := &hookClient{url: h.URL}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	if dial := c.opts.HookAddress; dial != "" {
		var d net.Dialer
		transport.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, dial)
		}
	}
	out.client = &http.Client{Transport: transport}
	if cfg.empty() {
		return out, nil
	}
	if cfg.Authorization != nil && cfg.BasicAuth != nil {
		return nil, errors.New("authorization and basicAuth are mutually exclusive")
	}
	if cfg.BasicAuth != nil {
		return nil, errors.New("basicAuth is not played by the e2e driver")
	}
	if b := cfg.CABundle; b != nil {
		pem, err := c.caBundle(ctx, b)
		if err != nil {
			return nil, fmt.Errorf("can't resolve caBundle: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, errors.New("caBundle: no valid PEM-encoded certificates found in the provided CA bundle")
		}
		transport.TLSClientConfig.RootCAs = pool
	}
	if ct := cfg.ClientTLS; ct != nil {
		certKey, keyKey := defaulted(ct.CertKey, "tls.crt"), defaulted(ct.PrivateKeyKey, "tls.key")
		certPEM, err := c.secretKey(ctx, KeyRef{Name: ct.SecretRef.Name, Namespace: ct.SecretRef.Namespace, Key: certKey})
		if err != nil {
			return nil, fmt.Errorf("can't resolve clientTLS: %w", err)
		}
		keyPEM, err := c.secretKey(ctx, KeyRef{Name: ct.SecretRef.Name, Namespace: ct.SecretRef.Namespace, Key: keyKey})
		if err != nil {
			return nil, fmt.Errorf("can't resolve clientTLS: %w", err)
		}
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, fmt.Errorf("can't resolve clientTLS: %w", err)
		}
		transport.TLSClientConfig.Certificates = []tls.Certificate{pair}
	}
	if a := cfg.Authorization; a != nil {
		typ := strings.TrimSpace(a.Type)
		if strings.EqualFold(typ, "basic") {
			return nil, fmt.Errorf("authorization type %q is not supported; use the basicAuth field instead", a.Type)
		}
		value, err := c.secretKey(ctx, a.SecretRef)
		if err != nil {
			return nil, fmt.Errorf("can't resolve authorization: %w", err)
		}
		out.auth = defaulted(typ, "Bearer") + " " + strings.TrimSpace(string(value))
	}
	return out, nil
}

func (c *Controller) caBundle(ctx context.Context, b *CABundle) ([]byte, error) {
	switch {
	case b.Inline != nil && b.SecretRef == nil && b.ConfigMapRef == nil:
		return []byte(*b.Inline), nil
	case b.SecretRef != nil && b.Inline == nil && b.ConfigMapRef == nil:
		ref := *b.SecretRef
		ref.Key = defaulted(ref.Key, "ca.crt")
		return c.secretKey(ctx, ref)
	case b.ConfigMapRef != nil && b.Inline == nil && b.SecretRef == nil:
		ref := *b.ConfigMapRef
		cm, err := c.opts.Dynamic.Resource(configMapsGVR).Namespace(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		v, _, _ := unstructured.NestedString(cm.Object, "data", defaulted(ref.Key, "ca.crt"))
		if v == "" {
			return nil, fmt.Errorf("key %q in ConfigMap %s/%s is missing or empty", ref.Key, ref.Namespace, ref.Name)
		}
		return []byte(v), nil
	}
	return nil, errors.New("exactly one of inline, secretRef, or configMapRef must be specified")
}

// secretKey reads one key of a Secret.
func (c *Controller) secretKey(ctx context.Context, ref KeyRef) ([]byte, error) {
	s, err := c.opts.Dynamic.Resource(secretsGVR).Namespace(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("can't get secret %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	encoded, found, _ := unstructured.NestedString(s.Object, "data", ref.Key)
	if !found {
		return nil, fmt.Errorf("secret %s/%s does not contain key %q", ref.Namespace, ref.Name, ref.Key)
	}
	return base64.StdEncoding.DecodeString(encoded)
}

func defaulted(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
