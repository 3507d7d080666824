// Package serving is the hook's HTTPS serving credentials and request authentication: the
// certificate, client CA and bearer tokens read from files and re-read while the process runs
// (Credentials), and which requests they admit (Guard). It knows nothing of the hooks it guards.
package serving

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"regexp"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// DefaultReloadInterval is how often Credentials re-reads its files. The kubelet refreshes a
// mounted Secret within about a minute of a change, so this adds little to a rotation.
const DefaultReloadInterval = 10 * time.Second

// minTokenLength refuses tokens short enough to guess.
const minTokenLength = 16

// b64token is RFC 6750's token68 syntax: what an Authorization header can carry as a Bearer token.
var b64token = regexp.MustCompile(`^[A-Za-z0-9._~+/-]+=*$`)

// CredentialFiles names the files behind the hook's HTTPS serving and authentication. Empty
// names turn the corresponding feature off.
type CredentialFiles struct {
	CertFile, KeyFile string // the serving certificate (chain) and its key, PEM
	ClientCAFile      string // CA bundle client certificates must chain to (mTLS)
	TokenFile         string // the bearer tokens accepted, one per line
	// Interval between re-reads (DefaultReloadInterval when zero).
	Interval   time.Duration
	Logger     *slog.Logger
	Registerer prometheus.Registerer // reload metrics; nil registers nothing
}

// Credentials holds the hook's serving certificate, client CA and bearer token, and re-reads
// their files while Run runs: cert-manager and the kubelet replace mounted Secrets in place, and
// a rotated certificate or token takes effect within Interval, without a restart. Connections
// already established (and the syncs in flight on them) keep going; new handshakes get the new
// certificate. A file that changes into something unusable (a half-written pair, an empty token)
// is reported and ignored: the last good value stays in force.
type Credentials struct {
	files CredentialFiles
	log   *slog.Logger

	cert      *watched[tls.Certificate]
	clientCAs *watched[x509.CertPool]
	token     *watched[[][]byte]

	reloads *prometheus.CounterVec
	expiry  prometheus.Gauge
}

// LoadCredentials reads every configured file once; an error names the file and what is wrong
// with it, never its content.
func LoadCredentials(f CredentialFiles) (*Credentials, error) {
	if (f.CertFile == "") != (f.KeyFile == "") {
		return nil, errors.New("a serving certificate needs both a certificate file and a key file")
	}
	if f.ClientCAFile != "" && f.CertFile == "" {
		return nil, errors.New("client certificates (mTLS) need HTTPS: give a serving certificate and key too")
	}
	if f.Interval <= 0 {
		f.Interval = DefaultReloadInterval
	}
	if f.Logger == nil {
		f.Logger = slog.New(slog.DiscardHandler)
	}
	c := &Credentials{files: f, log: f.Logger}
	c.reloads = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "memgraph_hooks_credential_reloads_total",
		Help: "Re-reads of changed credential files by credential (serving_certificate, client_ca, auth_token) and result (ok, error).",
	}, []string{"credential", "result"})
	c.expiry = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "memgraph_hooks_serving_certificate_expiry_timestamp_seconds",
		Help: "When the serving certificate in use expires (Unix time): alert well before it.",
	})
	var err error
	if f.CertFile != "" {
		if c.cert, err = newWatched("serving_certificate", []string{f.CertFile, f.KeyFile}, parseKeyPair, c); err != nil {
			return nil, err
		}
		c.expiry.Set(float64(c.cert.load().Leaf.NotAfter.Unix()))
	}
	if f.ClientCAFile != "" {
		if c.clientCAs, err = newWatched("client_ca", []string{f.ClientCAFile}, parseCAs, c); err != nil {
			return nil, err
		}
	}
	if f.TokenFile != "" {
		if c.token, err = newWatched("auth_token", []string{f.TokenFile}, parseTokens, c); err != nil {
			return nil, err
		}
	}
	if f.Registerer != nil {
		f.Registerer.MustRegister(c.reloads)
		if c.cert != nil {
			f.Registerer.MustRegister(c.expiry)
		}
	}
	return c, nil
}

// Run re-reads the files every Interval until ctx ends.
func (c *Credentials) Run(ctx context.Context) {
	tick := time.NewTicker(c.files.Interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			c.Reload()
		}
	}
}

// Reload re-reads every file now.
func (c *Credentials) Reload() {
	if c.cert != nil && c.cert.poll() {
		leaf := c.cert.load().Leaf
		c.expiry.Set(float64(leaf.NotAfter.Unix()))
		c.log.Info("reloaded the serving certificate", "serial", leaf.SerialNumber.String(), "notAfter", leaf.NotAfter)
	}
	if c.clientCAs != nil && c.clientCAs.poll() {
		c.log.Info("reloaded the client CA bundle")
	}
	if c.token != nil && c.token.poll() {
		c.log.Info("reloaded the auth token")
	}
}

// TLS reports whether a serving certificate is configured.
func (c *Credentials) TLS() bool { return c.cert != nil }

// TLSConfig is the server side of HTTPS (nil without a serving certificate): TLS 1.2 or later,
// the current certificate on every handshake, and, with a client CA, any client certificate
// presented verified against the current bundle. Requiring one is the handler's job
// (Config.ClientCertRequired), so that probes without a certificate still get through.
func (c *Credentials) TLSConfig() *tls.Config {
	if c.cert == nil {
		return nil
	}
	cfg := &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			return c.cert.load(), nil
		},
	}
	if c.clientCAs != nil {
		cfg.ClientAuth = tls.RequestClientCert
		cfg.VerifyConnection = func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return nil
			}
			inter := x509.NewCertPool()
			for _, cert := range cs.PeerCertificates[1:] {
				inter.AddCert(cert)
			}
			_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{
				Roots: c.clientCAs.load(), Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
			})
			return err
		}
	}
	return cfg
}

// ClientCertRequired reports whether a client CA is configured.
func (c *Credentials) ClientCertRequired() bool { return c.clientCAs != nil }

// Tokens is the TokenSource for Config.Token, or nil without a token file.
func (c *Credentials) Tokens() TokenSource {
	if c.token == nil {
		return nil
	}
	return tokenSource{c.token}
}

type tokenSource struct{ w *watched[[][]byte] }

func (t tokenSource) Tokens() [][]byte { return *t.w.load() }

// watched is a value parsed from files, replaced when their content changes and parses.
type watched[T any] struct {
	what    string
	paths   []string
	parse   func(contents [][]byte) (*T, error)
	creds   *Credentials
	current atomic.Pointer[T]

	mu   sync.Mutex
	last [][]byte // content of the last read, usable or not
}

func newWatched[T any](what string, paths []string, parse func([][]byte) (*T, error), c *Credentials) (*watched[T], error) {
	w := &watched[T]{what: what, paths: paths, parse: parse, creds: c}
	contents, err := w.read()
	if err != nil {
		return nil, err
	}
	v, err := parse(contents)
	if err != nil {
		return nil, &FileError{Paths: paths, Err: err}
	}
	w.current.Store(v)
	w.last = contents
	return w, nil
}

func (w *watched[T]) load() *T { return w.current.Load() }

func (w *watched[T]) read() ([][]byte, error) {
	contents := make([][]byte, len(w.paths))
	for i, p := range w.paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, &FileError{Paths: []string{p}, Err: err}
		}
		contents[i] = b
	}
	return contents, nil
}

// poll re-reads the files and reports whether a new value took effect.
func (w *watched[T]) poll() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	contents, err := w.read()
	if err != nil {
		w.fail(err)
		return false
	}
	if equalContents(contents, w.last) {
		return false
	}
	w.last = contents
	v, err := w.parse(contents)
	if err != nil {
		w.fail(fmt.Errorf("%s: %w", describe(w.paths), err))
		return false
	}
	w.current.Store(v)
	w.creds.reloads.WithLabelValues(w.what, "ok").Inc()
	return true
}

func (w *watched[T]) fail(err error) {
	w.creds.reloads.WithLabelValues(w.what, "error").Inc()
	w.creds.log.Warn("keeping the previous credential: its files changed into something unusable", "credential", w.what, "error", err.Error())
}

func equalContents(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// FileError is a credential file that could not be read or parsed: Paths are the files at fault
// (a certificate and its key are judged together), so that a command line can name its flag.
type FileError struct {
	Paths []string
	Err   error
}

func (e *FileError) Error() string {
	var pe *fs.PathError
	if errors.As(e.Err, &pe) {
		return e.Err.Error() // os names the path itself
	}
	return describe(e.Paths) + ": " + e.Err.Error()
}

func (e *FileError) Unwrap() error { return e.Err }

func describe(paths []string) string {
	if len(paths) == 2 {
		return paths[0] + " and " + paths[1]
	}
	return paths[0]
}

func parseKeyPair(c [][]byte) (*tls.Certificate, error) {
	pair, err := tls.X509KeyPair(c[0], c[1])
	if err != nil {
		return nil, err
	}
	return &pair, nil
}

func parseCAs(c [][]byte) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(c[0]) {
		return nil, errors.New("holds no PEM-encoded certificate")
	}
	return pool, nil
}

// maxTokens bounds the tokens a file may list: a rotation needs two at once.
const maxTokens = 8

// parseTokens reads one token per line, trimming surrounding whitespace (as Metacontroller does
// with the Secret's value) and skipping blank lines, and checks each could travel as a Bearer
// token. A file with one bad line is refused whole: accepting the rest would silently drop a
// token someone meant to add.
func parseTokens(c [][]byte) (*[][]byte, error) {
	var tokens [][]byte
	for i, line := range bytes.Split(c[0], []byte("\n")) {
		token := bytes.TrimSpace(line)
		if len(token) == 0 {
			continue
		}
		if err := checkToken(token); err != nil {
			return nil, fmt.Errorf("line %d %w", i+1, err)
		}
		tokens = append(tokens, token)
	}
	switch {
	case len(tokens) == 0:
		return nil, errors.New("is empty")
	case len(tokens) > maxTokens:
		return nil, fmt.Errorf("lists %d tokens, more than %d: a rotation needs two at a time", len(tokens), maxTokens)
	}
	return &tokens, nil
}

// checkToken says why token could not travel as a Bearer token or would be easy to guess.
func checkToken(token []byte) error {
	switch {
	case !b64token.Match(token):
		return errors.New("holds characters a Bearer token cannot carry (RFC 6750: letters, digits, -._~+/ and trailing =)")
	case len(token) < minTokenLength:
		return fmt.Errorf("holds a token shorter than %d characters, too short to withstand guessing", minTokenLength)
	}
	return nil
}
