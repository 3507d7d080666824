package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/backup"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/serving"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/bolt"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// agentOptions are the flags of `memgraph-hooks agent`, the backup sidecar of every data pod.
type agentOptions struct {
	listen          string
	snapshotDir     string
	logLevel        string
	shutdownTimeout time.Duration
	security        securityFlags // only the certificate, key, token and reload interval
}

// agentMain runs `memgraph-hooks agent` and returns its exit code (exitCode's).
func agentMain(args []string) int {
	o, err := parseAgentFlags(args, os.Stdout)
	return exitCode("memgraph-hooks agent", err, func() error { return runAgent(o) })
}

func parseAgentFlags(args []string, help io.Writer) (agentOptions, error) {
	var o agentOptions
	fs := flag.NewFlagSet("memgraph-hooks agent", flag.ContinueOnError)
	fs.StringVar(&o.listen, "listen", fmt.Sprintf(":%d", topology.BackupAgentPort), "address to serve the agent's HTTPS API on")
	fs.StringVar(&o.snapshotDir, "snapshot-dir", topology.SnapshotDirectory,
		"the default database's snapshot directory (the data volume mounted read-only at the memgraph container's path); only files directly in it, or in another database's beside it (../databases/<uuid>/snapshots), are uploaded")
	fs.StringVar(&o.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.DurationVar(&o.shutdownTimeout, "shutdown-timeout", 10*time.Second, "how long SIGTERM waits for requests in flight (jobs in flight are cancelled)")
	fs.StringVar(&o.security.certFile, "tls-cert-file", "", "serve HTTPS with this PEM certificate (chain); required; re-read when it changes")
	fs.StringVar(&o.security.keyFile, "tls-key-file", "", "the PEM private key of --tls-cert-file; required; re-read when it changes")
	fs.StringVar(&o.security.tokenFile, "auth-token-file", "",
		"require Authorization: Bearer <a token the file lists, one per line> on every endpoint but /healthz; required; re-read when it changes")
	fs.DurationVar(&o.security.reloadInterval, "credentials-reload-interval", serving.DefaultReloadInterval,
		"how often the certificate, key and token files are checked for changes")
	err := parseCommandLine(fs, args, help, usage{does: "The backup agent of every data pod (its backup-agent sidecar): backs up its pod's Memgraph to " +
		"S3-compatible object storage, and restores it, when the hook asks."})
	switch {
	case err != nil:
		return o, err
	case o.snapshotDir == "":
		return o, errors.New("--snapshot-dir must not be empty")
	case o.security.certFile == "" || o.security.keyFile == "":
		return o, errors.New("--tls-cert-file and --tls-key-file are required: the agent receives object-store credentials and serves only HTTPS")
	case o.security.tokenFile == "":
		return o, errors.New("--auth-token-file is required: the agent answers only the hook")
	}
	if err := checkServing(o.listen, o.logLevel, o.shutdownTimeout); err != nil {
		return o, err
	}
	return o, o.security.validate()
}

func runAgent(o agentOptions) error {
	logger, err := newLogger(o.logLevel)
	if err != nil {
		return err
	}
	creds, err := serving.LoadCredentials(serving.CredentialFiles{
		CertFile: o.security.certFile, KeyFile: o.security.keyFile, TokenFile: o.security.tokenFile,
		Interval: o.security.reloadInterval, Logger: logger,
	})
	if err != nil {
		return o.security.fileError(err)
	}
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return fmt.Errorf("--listen %s: %w", o.listen, err)
	}
	// Every job's Bolt goes to the Memgraph of this pod, on the loopback interface.
	pool := bolt.NewPool(bolt.PoolOptions{Resolver: memgraph.ResolverFunc(loopback), Logger: logger})
	defer func() { _ = pool.Close() }()
	agent, err := backup.NewAgent(backup.AgentConfig{SnapshotDir: o.snapshotDir, Tokens: creds.Tokens(), Logger: logger,
		Memgraph: backup.SnapshotsVia(pool.Snapshots)})
	if err != nil {
		_ = ln.Close()
		return err
	}
	defer agent.Close()
	return serveAgent(o, logger, ln, creds, agent.Handler())
}

// loopback is where the agent dials an advertised host:port: the same port on 127.0.0.1, the
// pod's own Memgraph (TLS still verifies the advertised host).
func loopback(address string) string {
	_, port, err := net.SplitHostPort(address)
	if err != nil {
		return address
	}
	return net.JoinHostPort("127.0.0.1", port)
}

// serveAgent serves HTTPS until SIGTERM or an interrupt, then drains requests in flight.
func serveAgent(o agentOptions, logger *slog.Logger, ln net.Listener, creds *serving.Credentials, handler http.Handler) error {
	srv := newServer(handler, 30*time.Second, logger)
	srv.TLSConfig = creds.TLSConfig()
	return serveUntilStopped(logger, creds, o.shutdownTimeout, []*http.Server{srv}, []net.Listener{ln}, func() {
		logger.Info("serving the backup agent", "listen", ln.Addr().String(), "snapshotDir", o.snapshotDir)
	})
}
