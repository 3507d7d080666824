// Command memgraph-hooks serves Metacontroller's sync and customize hooks for MemgraphClusters.
// With --simulate it also runs a built-in simulated Memgraph cluster (the one in
// examples/minimal-cluster.yaml) and talks real Bolt to it, for debugging with curl.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/memgraph-hooks/memgraph-hooks/hooks"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
)

type options struct {
	listen          string
	logLevel        string
	syncBudget      time.Duration
	maxBodyBytes    int64
	shutdownTimeout time.Duration
	simulate        bool
	resolve         memgraph.StaticResolver
	security        securityFlags
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "memgraph-hooks:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("memgraph-hooks", flag.ContinueOnError)
	fs.StringVar(&o.listen, "listen", ":8080", "address to serve the hooks on")
	fs.StringVar(&o.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.DurationVar(&o.syncBudget, "sync-budget", hooks.DefaultSyncBudget,
		"time one sync may spend on Bolt; keep it well under the CompositeController's webhook timeout (10s)")
	fs.Int64Var(&o.maxBodyBytes, "max-body-bytes", hooks.DefaultMaxBodyBytes, "largest hook request accepted")
	fs.DurationVar(&o.shutdownTimeout, "shutdown-timeout", 15*time.Second, "how long SIGTERM waits for requests in flight")
	fs.BoolVar(&o.simulate, "simulate", false,
		"run a built-in simulated Memgraph HA cluster answering at the FQDNs of examples/minimal-cluster.yaml")
	o.resolve = memgraph.StaticResolver{}
	fs.Var(o.resolve, "resolve",
		"host:port=dial-host:port; dial the second address for the first (repeatable), e.g. to reach coordinators through kubectl port-forward")
	registerSecurityFlags(fs, &o.security)
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if o.syncBudget <= 0 {
		return o, errors.New("--sync-budget must be positive")
	}
	return o, o.security.validate()
}

func run(args []string) error {
	o, err := parseFlags(args)
	if err != nil {
		return err
	}
	logger, err := newLogger(o.logLevel)
	if err != nil {
		return err
	}
	var resolver memgraph.Resolver = o.resolve
	if o.simulate {
		world, err := startSimulation(logger)
		if err != nil {
			return err
		}
		defer world.Close()
		resolver = chainResolver{o.resolve, world}
	}
	pool := memgraph.NewPool(memgraph.PoolOptions{Resolver: resolver, Logger: logger})
	defer pool.Close()

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	creds, err := o.security.load(logger, reg, o.simulate)
	if err != nil {
		return err
	}
	handler := hooks.NewHandler(handlerSecurity(hooks.Config{
		Connector: pool, SyncBudget: o.syncBudget, MaxBodyBytes: o.maxBodyBytes,
		Logger: logger, Registerer: reg, Gatherer: reg,
	}, creds, o.security))
	return serve(o, logger, handler, creds)
}

func serve(o options, logger *slog.Logger, handler http.Handler, creds *hooks.Credentials) error {
	srv := &http.Server{
		Addr:              o.listen,
		Handler:           handler,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      o.syncBudget + 30*time.Second,
		IdleTimeout:       2 * time.Minute,
		TLSConfig:         creds.TLSConfig(),
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	go creds.Run(ctx)
	errc := make(chan error, 1)
	go func() { errc <- listenAndServe(srv) }()
	logger.Info("serving hooks", "listen", o.listen, "syncBudget", o.syncBudget.String(), "simulate", o.simulate,
		"https", creds.TLS(), "bearerToken", o.security.tokenFile != "", "clientCertificates", creds.ClientCertRequired())
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

func newLogger(level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	return slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: l})), nil
}

// chainResolver asks each resolver in turn and takes the first answer that changes the address.
type chainResolver []memgraph.Resolver

func (c chainResolver) Resolve(address string) string {
	for _, r := range c {
		if to := r.Resolve(address); to != address {
			return to
		}
	}
	return address
}
