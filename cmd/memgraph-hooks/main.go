// Command memgraph-hooks serves Metacontroller's sync and customize hooks for MemgraphClusters.
// With --simulate it also runs a built-in simulated Memgraph cluster (the one in
// examples/minimal-cluster.yaml) and talks real Bolt to it, for debugging with curl.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/memgraph-hooks/memgraph-hooks/hooks"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/serving"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/bolt"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

type options struct {
	listen          string
	metricsListen   string
	logLevel        string
	syncBudget      time.Duration
	projectionGrace time.Duration
	maxBodyBytes    int64
	shutdownTimeout time.Duration
	simulate        bool
	resolve         memgraph.StaticResolver
	security        securityFlags
	agentImage      string
}

// Exit codes: 2 for a command line that cannot run (bad flag, value or argument, or a file flag
// whose file cannot be read or parsed: FileError), 1 for a failure while running (a port already
// taken), 0 after --help or a clean shutdown.
// `memgraph-hooks agent …` runs the backup agent instead (agent.go), with the same exit codes.
func main() {
	if len(os.Args) > 1 && os.Args[1] == "agent" {
		os.Exit(agentMain(os.Args[2:]))
	}
	o, err := parseFlags(os.Args[1:], os.Stdout)
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(0)
	case err != nil:
		fmt.Fprintf(os.Stderr, "memgraph-hooks: %v\nRun memgraph-hooks --help to list the flags.\n", err)
		os.Exit(2)
	}
	if err := run(o); err != nil {
		var fe *FileError
		if errors.As(err, &fe) { // a file flag names a file the hook cannot use: the command line cannot run
			fmt.Fprintf(os.Stderr, "memgraph-hooks: %v\nRun memgraph-hooks --help to list the flags.\n", err)
			os.Exit(2)
		}
		fmt.Fprintln(os.Stderr, "memgraph-hooks:", err)
		os.Exit(1)
	}
}

// parseFlags parses and checks the command line. --help prints the flags to help and returns
// flag.ErrHelp; any other error names the flag or argument at fault.
func parseFlags(args []string, help io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("memgraph-hooks", flag.ContinueOnError)
	fs.StringVar(&o.listen, "listen", defaultListen, "address to serve the hooks on; with --simulate, 127.0.0.1:8080 unless given")
	fs.StringVar(&o.metricsListen, "metrics-listen", defaultMetricsListen,
		"address to serve GET /metrics on, apart from the hooks; with --simulate, 127.0.0.1:9090 unless given; empty: none")
	fs.StringVar(&o.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.DurationVar(&o.syncBudget, "sync-budget", hooks.DefaultSyncBudget,
		"time one sync may spend on Bolt; keep it well under the CompositeController's webhook timeout (10s)")
	fs.DurationVar(&o.projectionGrace, "certificate-projection-grace", planner.ProjectionGrace,
		"how long after a TLS Secret changes the kubelet has updated the files in every pod (its sync period plus its Secret cache TTL): "+
			"the hook then reloads every instance once more, and restarts the pods of one that still serves another certificate")
	fs.Int64Var(&o.maxBodyBytes, "max-body-bytes", hooks.DefaultMaxBodyBytes, "largest hook request accepted")
	fs.DurationVar(&o.shutdownTimeout, "shutdown-timeout", 15*time.Second, "how long SIGTERM waits for requests in flight")
	fs.BoolVar(&o.simulate, "simulate", false,
		"run a built-in simulated Memgraph HA cluster answering at the FQDNs of examples/minimal-cluster.yaml")
	o.resolve = memgraph.StaticResolver{}
	fs.Var(o.resolve, "resolve",
		"host:port=dial-host:port; dial the second address for the first (repeatable), e.g. to reach coordinators through kubectl port-forward")
	fs.StringVar(&o.agentImage, "agent-image", topology.DefaultAgentImage,
		"image of the backup-agent sidecar of every data pod (`memgraph-hooks agent`): the hook's own; changing it rolls the data pods")
	registerSecurityFlags(fs, &o.security)
	fs.SetOutput(io.Discard) // errors are reported once, by main
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printUsage(fs, help)
		}
		return o, err
	}
	if err := o.check(fs); err != nil {
		return o, err
	}
	return o, o.security.validate()
}

func run(o options) error {
	logger, err := newLogger(o.logLevel)
	if err != nil {
		return err
	}
	lns, err := bind(o)
	if err != nil {
		return err
	}
	defer lns.close()
	var resolver memgraph.Resolver = o.resolve
	if o.simulate {
		world, err := startSimulation(logger)
		if err != nil {
			return err
		}
		defer world.Close()
		resolver = chainResolver{o.resolve, world}
	}
	pool := bolt.NewPool(bolt.PoolOptions{Resolver: resolver, Logger: logger})
	defer pool.Close()

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "memgraph_hooks_bolt_pools",
			Help: "Coordinator addresses the hook holds Bolt connections to; one nobody asked for a minute is closed, so it follows the clusters that exist.",
		}, func() float64 { return float64(pool.Stats().Addresses) }))
	creds, err := o.security.load(logger, reg, o.simulate)
	if err != nil {
		return err
	}
	cfg := handlerSecurity(hooks.Config{
		Connector: pool, SyncBudget: o.syncBudget, MaxBodyBytes: o.maxBodyBytes, ProjectionGrace: o.projectionGrace,
		Logger: logger, Registerer: reg, AgentResolver: o.resolve, AgentImage: o.agentImage,
	}, creds, o.security)
	return serve(o, logger, lns, creds, hooks.NewHandler(cfg), hooks.MetricsHandler(cfg, reg))
}

// serve serves the hooks and the metrics on listeners already bound, until SIGTERM or an
// interrupt, then drains requests in flight for up to --shutdown-timeout. The hooks speak HTTPS
// when a serving certificate is configured; the metrics too when --metrics-auth puts them behind
// the same credentials (a token must not cross the network in plain text).
func serve(o options, logger *slog.Logger, lns listeners, creds *serving.Credentials, handler, metrics http.Handler) error {
	servers := []*http.Server{{
		Handler:           handler,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      o.syncBudget + 30*time.Second,
		IdleTimeout:       2 * time.Minute,
		TLSConfig:         creds.TLSConfig(),
		ErrorLog:          serverLog(logger),
	}}
	if lns.metrics != nil {
		srv := &http.Server{
			Handler:           metrics,
			ReadHeaderTimeout: 5 * time.Second,
			ReadTimeout:       30 * time.Second,
			WriteTimeout:      30 * time.Second,
			IdleTimeout:       2 * time.Minute,
			ErrorLog:          serverLog(logger),
		}
		if o.security.protectMetrics {
			srv.TLSConfig = creds.TLSConfig()
		}
		servers = append(servers, srv)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	go creds.Run(ctx)
	errc := make(chan error, len(servers))
	for i, ln := range lns.all() {
		go func() { errc <- serveOn(servers[i], ln) }()
	}
	logger.Info("serving hooks", "listen", lns.hooks.Addr().String(), "metrics", lns.metricsAddr(),
		"syncBudget", o.syncBudget.String(), "simulate", o.simulate,
		"https", creds.TLS(), "bearerToken", o.security.tokenFile != "", "clientCertificates", creds.ClientCertRequired())
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), o.shutdownTimeout)
	defer cancel()
	var errs []error
	for _, srv := range servers {
		errs = append(errs, srv.Shutdown(shutdownCtx))
	}
	return errors.Join(errs...)
}

// serverLog routes net/http's own lines (a failed TLS handshake, a panic in a handler, an accept
// error) into the hook's JSON log at warn level, instead of plain text on stderr.
func serverLog(logger *slog.Logger) *log.Logger {
	return slog.NewLogLogger(logger.Handler(), slog.LevelWarn)
}

func newLogger(level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	return slog.New(hooks.LogHandler(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: l}))), nil
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
