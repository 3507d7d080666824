package hooks

import (
	"context"
	"log/slog"

	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// Every log line of a sync names its cluster (namespace/name, bounded): the hook's own lines
// through a handler copy whose logger carries the attribute, the Bolt client's lines (package
// memgraph logs with the sync's context) through LogHandler.

const logCluster = "cluster"

// forCluster returns a copy of h whose logger names c on every line.
func (h *handler) forCluster(c *topology.Cluster) *handler {
	scoped := *h
	scoped.log = h.log.With(logCluster, clusterKey(c))
	return &scoped
}

type clusterLogKey struct{}

// withClusterLog marks ctx as belonging to c's sync, for LogHandler.
func withClusterLog(ctx context.Context, c *topology.Cluster) context.Context {
	return context.WithValue(ctx, clusterLogKey{}, clusterKey(c))
}

// LogHandler wraps next so that a record logged with the context of a sync names that sync's
// cluster. The hook's logger and the Bolt pool's logger should both be built on it.
func LogHandler(next slog.Handler) slog.Handler { return contextHandler{next} }

type contextHandler struct{ slog.Handler }

func (c contextHandler) Handle(ctx context.Context, r slog.Record) error {
	if key, ok := ctx.Value(clusterLogKey{}).(string); ok {
		r.AddAttrs(slog.String(logCluster, key))
	}
	return c.Handler.Handle(ctx, r)
}

func (c contextHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return contextHandler{c.Handler.WithAttrs(attrs)}
}

func (c contextHandler) WithGroup(name string) slog.Handler {
	return contextHandler{c.Handler.WithGroup(name)}
}
