package bolt

import (
	"context"
	"fmt"
	"log/slog"
)

// driverLog forwards the neo4j driver's own log (dials, pool decisions, dead connections) to
// the Pool's Logger at debug level: everything it reports as a failure also reaches the
// caller as a *memgraph.Error, so at info level it would only repeat those. The driver's own
// level goes under driverLevel: a line has one level key, the logger's.
type driverLog struct{ logger *slog.Logger }

func (d driverLog) enabled() bool { return d.logger.Enabled(context.Background(), slog.LevelDebug) }

func (d driverLog) Error(name, id string, err error) {
	if d.enabled() {
		d.logger.Debug("neo4j driver: "+err.Error(), "component", name, "id", id, "driverLevel", "error")
	}
}

func (d driverLog) Warnf(name, id, msg string, args ...any) { d.log(name, id, "warn", msg, args) }
func (d driverLog) Infof(name, id, msg string, args ...any) { d.log(name, id, "info", msg, args) }

// Debugf drops the driver's debug chatter (one line per message sent), which would flood a
// hook's debug log.
func (d driverLog) Debugf(string, string, string, ...any) {}

func (d driverLog) log(name, id, level, msg string, args []any) {
	if d.enabled() {
		d.logger.Debug("neo4j driver: "+fmt.Sprintf(msg, args...), "component", name, "id", id, "driverLevel", level)
	}
}
