package main

import (
	"errors"
	"flag"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/memgraph-hooks/memgraph-hooks/hooks"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/serving"
)

// securityFlags are how the hook proves itself to Metacontroller (HTTPS) and tells Metacontroller
// from anyone else (a bearer token, a client certificate, or both).
type securityFlags struct {
	certFile, keyFile string
	clientCAFile      string
	tokenFile         string
	protectMetrics    bool
	reloadInterval    time.Duration
}

func registerSecurityFlags(fs *flag.FlagSet, s *securityFlags) {
	fs.StringVar(&s.certFile, "tls-cert-file", "", "serve HTTPS with this PEM certificate (chain); re-read when it changes")
	fs.StringVar(&s.keyFile, "tls-key-file", "", "the PEM private key of --tls-cert-file; re-read when it changes")
	fs.StringVar(&s.clientCAFile, "client-ca-file", "",
		"require a client certificate signed by a CA in this PEM bundle on every endpoint but the probes (mTLS; needs HTTPS)")
	fs.StringVar(&s.tokenFile, "auth-token-file", "",
		"require Authorization: Bearer <a token the file lists, one per line> on every endpoint but the probes; re-read when it changes")
	fs.BoolVar(&s.protectMetrics, "metrics-auth", false, "put /metrics (on --metrics-listen) behind the same token and client certificate, over the same HTTPS")
	fs.DurationVar(&s.reloadInterval, "credentials-reload-interval", serving.DefaultReloadInterval,
		"how often the certificate, client CA and token files are checked for changes")
}

// validate refuses flags that cannot work together, naming them.
func (s securityFlags) validate() error {
	switch {
	case s.certFile != "" && s.keyFile == "":
		return errors.New("--tls-cert-file needs --tls-key-file, the certificate's private key")
	case s.keyFile != "" && s.certFile == "":
		return errors.New("--tls-key-file needs --tls-cert-file, the certificate it is the key of")
	case s.clientCAFile != "" && s.certFile == "":
		return errors.New("--client-ca-file needs HTTPS: give --tls-cert-file and --tls-key-file too")
	case s.protectMetrics && s.tokenFile == "" && s.clientCAFile == "":
		return errors.New("--metrics-auth needs --auth-token-file or --client-ca-file")
	case s.reloadInterval <= 0:
		return errors.New("--credentials-reload-interval must be positive")
	}
	return nil
}

// load reads the credential files and says out loud what the configuration leaves open.
func (s securityFlags) load(logger *slog.Logger, reg prometheus.Registerer, simulate bool) (*serving.Credentials, error) {
	creds, err := serving.LoadCredentials(serving.CredentialFiles{
		CertFile: s.certFile, KeyFile: s.keyFile, ClientCAFile: s.clientCAFile, TokenFile: s.tokenFile,
		Interval: s.reloadInterval, Logger: logger, Registerer: reg,
	})
	if err != nil {
		return nil, s.fileError(err)
	}
	switch {
	case s.tokenFile != "" && !creds.TLS():
		logger.Warn("INSECURE: --auth-token-file without --tls-cert-file: the bearer token crosses the network in plain text, " +
			"and whoever sees it can replay it to make the hook act on any cluster; serve HTTPS")
	case s.tokenFile == "" && s.clientCAFile == "" && !simulate:
		logger.Warn("INSECURE: the hook answers whoever reaches it: anyone who can POST /sync can make it register, demote " +
			"or remove Memgraph instances; set --auth-token-file and/or --client-ca-file (manifests/ does)")
	}
	return creds, nil
}

// handlerSecurity is the part of the hook's Config that the credentials decide.
func handlerSecurity(cfg hooks.Config, creds *serving.Credentials, s securityFlags) hooks.Config {
	cfg.Token = creds.Tokens()
	cfg.ClientCertRequired = creds.ClientCertRequired()
	cfg.ProtectMetrics = s.protectMetrics
	return cfg
}

// serveOn serves HTTPS on ln when the server has a TLS configuration (the certificate comes
// from its GetCertificate, so the file arguments stay empty), plain HTTP otherwise.
func serveOn(srv *http.Server, ln net.Listener) error {
	if srv.TLSConfig != nil {
		return srv.ServeTLS(ln, "", "")
	}
	return srv.Serve(ln)
}

// FileError is a file flag whose file cannot be used: a command line that cannot run, so the
// hook exits 2, naming the flag.
type FileError struct {
	Flags string // "--tls-cert-file", or "--tls-cert-file and --tls-key-file" for a key pair
	Err   error
}

func (e *FileError) Error() string { return e.Flags + ": " + e.Err.Error() }
func (e *FileError) Unwrap() error { return e.Err }

// fileError names the flags of the files a serving.FileError is about; other errors pass.
func (s securityFlags) fileError(err error) error {
	var fe *serving.FileError
	if !errors.As(err, &fe) {
		return err
	}
	flagOf := map[string]string{}
	for _, f := range []struct{ name, path string }{
		{"--auth-token-file", s.tokenFile}, {"--client-ca-file", s.clientCAFile},
		{"--tls-key-file", s.keyFile}, {"--tls-cert-file", s.certFile},
	} {
		if f.path != "" {
			flagOf[f.path] = f.name
		}
	}
	var flags []string
	for _, p := range fe.Paths {
		if name, ok := flagOf[p]; ok && !slices.Contains(flags, name) {
			flags = append(flags, name)
		}
	}
	if len(flags) == 0 {
		return err
	}
	return &FileError{Flags: strings.Join(flags, " and "), Err: err}
}
