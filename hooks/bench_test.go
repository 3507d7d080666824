package hooks_test

import (
	"context"
	"net/http"
	"testing"
)

// BenchmarkConvergedSync is one sync of a converged 3+2 cluster through the whole handler:
// decode, one SHOW INSTANCES on a pooled connection, render, encode. Compare it with
// BenchmarkShowInstancesFloor, the Bolt round trip alone, measured in the same run.
func BenchmarkConvergedSync(b *testing.B) {
	h := newHarness(b, 3, 2)
	h.sync()
	h.sync()
	req := h.request()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if code, body := h.post("/sync", req); code != http.StatusOK {
			b.Fatalf("%d %s", code, body)
		}
	}
}

func BenchmarkShowInstancesFloor(b *testing.B) {
	h := newHarness(b, 3, 2)
	h.sync()
	h.sync()
	client := h.pool.Client(h.network().Coordinator(1).BoltServer)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := client.ShowInstances(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
