package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
)

// The listeners' defaults: every interface in a Pod; with --simulate, loopback only (the hook
// talks to a simulated cluster on a workstation and nothing else should reach it), on ports of
// their own: kubectl without a kubeconfig falls back to an API server at 127.0.0.1:8080, and
// would otherwise talk to the hook.
const (
	defaultListen        = ":8080"
	defaultMetricsListen = ":9090"
	simulateListen       = "127.0.0.1:18080"
	simulateMetrics      = "127.0.0.1:19090"
)

// check refuses values the hook cannot run with, and applies --simulate's loopback defaults to
// the listen addresses not given.
func (o *options) check(fs *flag.FlagSet) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if o.simulate && !given["listen"] {
		o.listen = simulateListen
	}
	if o.simulate && !given["metrics-listen"] {
		o.metricsListen = simulateMetrics
	}
	switch {
	case o.syncBudget <= 0:
		return fmt.Errorf("--sync-budget must be positive, got %s", o.syncBudget)
	case o.projectionGrace <= 0:
		return fmt.Errorf("--certificate-projection-grace must be positive, got %s", o.projectionGrace)
	case o.maxBodyBytes <= 0:
		return fmt.Errorf("--max-body-bytes must be positive, got %d", o.maxBodyBytes)
	case o.agentImage == "":
		return errors.New("--agent-image must not be empty")
	}
	return checkServing(o.listen, o.logLevel, o.shutdownTimeout)
}

// listeners are the bound sockets; metrics is nil when --metrics-listen is empty.
type listeners struct {
	hooks, metrics net.Listener
}

// bind opens the listeners before anything else starts, so a port already taken fails at once,
// naming the flag and the address.
func bind(o options) (listeners, error) {
	var lns listeners
	var err error
	if lns.hooks, err = net.Listen("tcp", o.listen); err != nil {
		return lns, fmt.Errorf("--listen %s: %w", o.listen, err)
	}
	if o.metricsListen != "" {
		if lns.metrics, err = net.Listen("tcp", o.metricsListen); err != nil {
			lns.close()
			return lns, fmt.Errorf("--metrics-listen %s: %w", o.metricsListen, err)
		}
	}
	return lns, nil
}

func (l listeners) all() []net.Listener {
	if l.metrics == nil {
		return []net.Listener{l.hooks}
	}
	return []net.Listener{l.hooks, l.metrics}
}

func (l listeners) metricsAddr() string {
	if l.metrics == nil {
		return "off"
	}
	return l.metrics.Addr().String()
}

func (l listeners) close() {
	for _, ln := range l.all() {
		if ln != nil {
			_ = ln.Close()
		}
	}
}
