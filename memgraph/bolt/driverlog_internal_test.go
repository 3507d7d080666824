package bolt

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

// The driver's lines reach the log at debug level with one level key, the logger's; the
// driver's own level is driverLevel.
func TestDriverLinesHaveOneLevel(t *testing.T) {
	var buf bytes.Buffer
	d := driverLog{slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	d.Error("pool", "1", errors.New("connection refused"))
	d.Warnf("router", "2", "dropping %s", "a server")
	d.Infof("pool", "3", "closed")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3: %q", len(lines), lines)
	}
	for i, want := range []string{"error", "warn", "info"} {
		if n := strings.Count(lines[i], `"level":`); n != 1 || !strings.Contains(lines[i], `"level":"DEBUG"`) {
			t.Errorf("line %q: %d level keys, want one, DEBUG", lines[i], n)
		}
		if !strings.Contains(lines[i], `"driverLevel":"`+want+`"`) {
			t.Errorf("line %q lacks driverLevel %q", lines[i], want)
		}
	}
}
