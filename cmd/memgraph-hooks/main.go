// Command memgraph-hooks serves Metacontroller's sync and customize hooks for MemgraphClusters.
// With --simulate it also runs a built-in simulated Memgraph cluster (the one in
// examples/minimal-cluster.yaml) and talks real Bolt to it, for debugging with curl.
package main

import (
	"flag"
	"io"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/memgraph-hooks/memgraph-hooks/hooks"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/serving"
	"github.com/memgraph-hooks/memgraph-hooks/internal/version"
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

// main runs the hook, or `memgraph-hooks agent …` the backup agent (agent.go), with exitCode's
// exit codes.
func main() {
	if len(os.Args) > 1 && os.Args[1] == "agent" {
		os.Exit(agentMain(os.Args[2:]))
	}
	o, err := parseFlags(os.Args[1:], os.Stdout)
	os.Exit(exitCode("memgraph-hooks", err, func() error { return run(o) }))
}

// parseFlags parses and checks the command line. --help prints the flags to help and returns
// flag.ErrHelp; any other error names the flag or argument at fault.
func parseFlags(args []string, help io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("memgraph-hooks", flag.ContinueOnError)
	fs.StringVar(&o.listen, "listen", defaultListen, "address to serve the hooks on; with --simulate, "+simulateListen+" unless given")
	fs.StringVar(&o.metricsListen, "metrics-listen", defaultMetricsListen,
		"address to serve GET /metrics on, apart from the hooks; with --simulate, "+simulateMetrics+" unless given; empty: none")
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
		"image of the backup-agent sidecar of every data pod, which runs memgraph-hooks agent: the hook's own; changing it rolls the data pods")
	registerSecurityFlags(fs, &o.security)
	if err := parseCommandLine(fs, args, help, hookUsage); err != nil {
		return o, err
	}
	if err := o.check(fs); err != nil {
		return o, err
	}
	return o, o.security.validate()
}

// hookUsage is what --help says besides the flags.
var hookUsage = usage{
	does: "Serves Metacontroller's sync and customize hooks for MemgraphClusters; with --simulate, against a built-in\n" +
		"simulated Memgraph cluster, for trying the hook with curl (docs/operations.md, \"Debugging with curl\").",
	subcommands: []string{"agent [flags]    the backup agent of every data pod (memgraph-hooks agent --help)"},
}

// run reads the credential files, binds the listeners and serves. The files come first: a
// command line naming a file it cannot use fails on that, whatever the ports.
func run(o options) error {
	logger, err := newLogger(o.logLevel)
	if err != nil {
		return err
	}
	reg := prometheus.NewRegistry()
	creds, err := o.security.load(logger, reg, o.simulate)
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

	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "memgraph_hooks_bolt_pools",
			Help: "Coordinator addresses the hook holds Bolt connections to; one nobody asked for a minute is closed, so it follows the clusters that exist.",
		}, func() float64 { return float64(pool.Stats().Addresses) }))
	cfg := handlerSecurity(o.hookConfig(pool, logger, reg), creds, o.security)
	return serve(o, logger, lns, creds, hooks.NewHandler(cfg), hooks.MetricsHandler(cfg, reg))
}

// hookConfig is the handler's configuration the flags set, with the pool the hook dials through
// and where it logs and registers its metrics (the credentials are handlerSecurity's).
func (o options) hookConfig(connector memgraph.Connector, logger *slog.Logger, reg prometheus.Registerer) hooks.Config {
	return hooks.Config{
		Connector: connector, SyncBudget: o.syncBudget, MaxBodyBytes: o.maxBodyBytes, ProjectionGrace: o.projectionGrace,
		Logger: logger, Registerer: reg, AgentResolver: o.resolve, AgentImage: o.agentImage,
	}
}

// serve serves the hooks and the metrics on listeners already bound, until SIGTERM or an
// interrupt, then drains requests in flight for up to --shutdown-timeout. The hooks speak HTTPS
// when a serving certificate is configured; the metrics too when --metrics-auth puts them behind
// the same credentials (a token must not cross the network in plain text).
func serve(o options, logger *slog.Logger, lns listeners, creds *serving.Credentials, handler, metrics http.Handler) error {
	hooksServer := newServer(handler, o.syncBudget+30*time.Second, logger)
	hooksServer.TLSConfig = creds.TLSConfig()
	servers := []*http.Server{hooksServer}
	if lns.metrics != nil {
		srv := newServer(metrics, 30*time.Second, logger)
		if o.security.protectMetrics {
			srv.TLSConfig = creds.TLSConfig()
		}
		servers = append(servers, srv)
	}
	return serveUntilStopped(logger, creds, o.shutdownTimeout, servers, lns.all(), func() {
		logger.Info("serving hooks", "version", version.Get().String(), "listen", lns.hooks.Addr().String(), "metrics", lns.metricsAddr(),
			"syncBudget", o.syncBudget.String(), "simulate", o.simulate,
			"https", creds.TLS(), "bearerToken", o.security.tokenFile != "", "clientCertificates", creds.ClientCertRequired())
		if o.simulate {
			logger.Info("the simulated cluster waits for its first sync: walk through docs/operations.md, \"Debugging with curl\"",
				"try", "curl -s "+lns.hooks.Addr().String()+"/sync -d @examples/hook-requests/sync-pods-ready.json | jq .status")
		}
	})
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
