package hooks_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/bolt"
)

// unprobed is a TLS connector that cannot see served certificates, so the rotation stage does
// not run: the yardstick of what the stage costs a converged sync.
type unprobed struct{ memgraph.TLSConnector }

func (u unprobed) WithTLS(t *memgraph.BoltTLS) memgraph.Connector {
	return struct{ memgraph.Connector }{u.TLSConnector.WithTLS(t)}
}

// BenchmarkConvergedSyncOverTLS is a converged 3×2 sync with spec.tls against the same sync
// without the rotation stage, in alternating rounds, and reports the ratio with ÷ without (goal
// ≈ 1): once the Secret's content is recorded as reloaded the stage makes no handshake (it made
// five per sync before, 3.2×).
func BenchmarkConvergedSyncOverTLS(b *testing.B) {
	sync := func(h *harness) {
		if code, body := h.post("/sync", h.request()); code != http.StatusOK {
			b.Fatalf("%d %s", code, body)
		}
	}
	with, _ := newTLSHarness(b, 3, 2)
	without, _ := newTLSHarness(b, 3, 2, func(c *harnessConfig) {
		c.connector = func(p *bolt.Pool) memgraph.Connector { return unprobed{p} }
	})
	for _, h := range []*harness{with, without} {
		h.bootstrap()
		h.sync()
		h.assertConverged()
	}
	b.ReportAllocs()
	b.ResetTimer()
	var tWith, tWithout float64
	for i := 0; i < b.N; i++ {
		start := time.Now()
		sync(with)
		tWith += time.Since(start).Seconds()
		start = time.Now()
		sync(without)
		tWithout += time.Since(start).Seconds()
	}
	b.ReportMetric(tWith/tWithout, "with/without")
}
