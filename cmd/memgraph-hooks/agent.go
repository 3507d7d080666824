package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/backup"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/serving"
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

// agentMain runs `memgraph-hooks agent`, with main's exit codes.
func agentMain(args []string) int {
	o, err := parseAgentFlags(args, os.Stdout)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case err != nil:
		fmt.Fprintf(os.Stderr, "memgraph-hooks agent: %v\nRun memgraph-hooks agent --help to list the flags.\n", err)
		return 2
	}
	if err := runAgent(o); err != nil {
		var fe *FileError
		if errors.As(err, &fe) {
			fmt.Fprintf(os.Stderr, "memgraph-hooks agent: %v\nRun memgraph-hooks agent --help to list the flags.\n", err)
			return 2
		}
		fmt.Fprintln(os.Stderr, "memgraph-hooks agent:", err)
		return 1
	}
	return 0
}

func parseAgentFlags(args []string, help io.Writer) (agentOptions, error) {
	var o agentOptions
	fs := flag.NewFlagSet("memgraph-hooks agent", flag.ContinueOnError)
	fs.StringVar(&o.listen, "listen", fmt.Sprintf(":%d", topology.BackupAgentPort), "address to serve the agent's HTTPS API on")
	fs.StringVar(&o.snapshotDir, "snapshot-dir", topology.SnapshotDirectory,
		"the instance's snapshot directory (the data volume mounted read-only at the memgraph container's path); only files directly in it are uploaded")
	fs.StringVar(&o.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.DurationVar(&o.shutdownTimeout, "shutdown-timeout", 10*time.Second, "how long SIGTERM waits for requests in flight (uploads in flight are cancelled)")
	fs.StringVar(&o.security.certFile, "tls-cert-file", "", "serve HTTPS with this PEM certificate (chain); required; re-read when it changes")
	fs.StringVar(&o.security.keyFile, "tls-key-file", "", "the PEM private key of --tls-cert-file; required; re-read when it changes")
	fs.StringVar(&o.security.tokenFile, "auth-token-file", "",
		"require Authorization: Bearer <a token the file lists, one per line> on every endpoint but /healthz; required; re-read when it changes")
	fs.DurationVar(&o.security.reloadInterval, "credentials-reload-interval", serving.DefaultReloadInterval,
		"how often the certificate, key and token files are checked for changes")
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printUsageOf(fs, help, "memgraph-hooks agent",
				"Uploads this data pod's Memgraph snapshots to S3-compatible object storage when the hook asks.")
		}
		return o, err
	}
	switch {
	case fs.NArg() > 0:
		return o, fmt.Errorf("unexpected argument %q: memgraph-hooks agent takes only flags", fs.Arg(0))
	case o.listen == "":
		return o, errors.New("--listen must not be empty")
	case o.snapshotDir == "":
		return o, errors.New("--snapshot-dir must not be empty")
	case o.security.certFile == "" || o.security.keyFile == "":
		return o, errors.New("--tls-cert-file and --tls-key-file are required: the agent receives object-store credentials and serves only HTTPS")
	case o.security.tokenFile == "":
		return o, errors.New("--auth-token-file is required: the agent answers only the hook")
	case o.shutdownTimeout < 0:
		return o, fmt.Errorf("--shutdown-timeout must not be negative, got %s", o.shutdownTimeout)
	}
	if _, err := newLogger(o.logLevel); err != nil {
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
	agent, err := backup.NewAgent(backup.AgentConfig{SnapshotDir: o.snapshotDir, Tokens: creds.Tokens(), Logger: logger})
	if err != nil {
		_ = ln.Close()
		return err
	}
	defer agent.Close()
	return serveAgent(o, logger, ln, creds, agent.Handler())
}

// serveAgent serves HTTPS until SIGTERM or an interrupt, then drains requests in flight.
func serveAgent(o agentOptions, logger *slog.Logger, ln net.Listener, creds *serving.Credentials, handler http.Handler) error {
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		TLSConfig:         creds.TLSConfig(),
		ErrorLog:          serverLog(logger),
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	go creds.Run(ctx)
	errc := make(chan error, 1)
	go func() { errc <- serveOn(srv, ln) }()
	logger.Info("serving the backup agent", "listen", ln.Addr().String(), "snapshotDir", o.snapshotDir)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), o.shutdownTimeout)
	defer cancel()
	return srv.Shutdown(shutdownCtx)
}
