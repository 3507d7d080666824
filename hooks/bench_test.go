package hooks_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"testing"
	"time"
)

// The converged sync is the hook's steady state. Its cost is compared, in the same run, with a
// bare encoding/json round trip of the same bytes: the request decoded into a map[string]any
// and the same response encoded from one. `make bench` prints the ratios.

var benchSizes = [][2]int{{3, 2}, {7, 15}}

// benchCases are the sizes, each also with its Pods as the API server serves them
// (withAPIServerPods): the harness's Pods carry only what the hook reads.
var benchCases = []struct {
	name          string
	size          [2]int
	apiServerPods bool
}{
	{"3x2", [2]int{3, 2}, false}, {"7x15", [2]int{7, 15}, false},
	{"3x2-api-pods", [2]int{3, 2}, true}, {"7x15-api-pods", [2]int{7, 15}, true},
}

// convergedBench is a converged cluster and the bytes of its steady-state sync.
type convergedBench struct {
	h        *harness
	request  []byte
	response map[string]any // the converged response, as the bare round trip encodes it
}

func newConvergedBench(b testing.TB, coordinators, data int, apiServerPods bool) convergedBench {
	h := convergedHarness(b, coordinators, data)
	request := h.request()
	if apiServerPods {
		request = h.withAPIServerPods(request)
	}
	req, err := metacontrollerJSON(request)
	if err != nil {
		b.Fatal(err)
	}
	cb := convergedBench{h: h, request: req}
	code, body := cb.sync()
	if code != http.StatusOK {
		b.Fatalf("%d %s", code, body)
	}
	if err := json.Unmarshal(body, &cb.response); err != nil {
		b.Fatal(err)
	}
	return cb
}

// sync posts the converged request to the handler, as the HTTP server would hand it over.
func (cb convergedBench) sync() (int, []byte) {
	r, err := http.NewRequest(http.MethodPost, "/sync", bytes.NewReader(cb.request))
	if err != nil {
		panic(err)
	}
	w := &bufferWriter{header: http.Header{}}
	cb.h.handler.ServeHTTP(w, r)
	return w.code, w.body.Bytes()
}

// bareRoundTrip is the yardstick: decode the request into a map, encode the response.
func (cb convergedBench) bareRoundTrip() error {
	var req map[string]any
	if err := json.Unmarshal(cb.request, &req); err != nil {
		return err
	}
	_, err := json.Marshal(cb.response)
	return err
}

type bufferWriter struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (w *bufferWriter) Header() http.Header  { return w.header }
func (w *bufferWriter) WriteHeader(code int) { w.code = code }
func (w *bufferWriter) Write(p []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.body.Write(p)
}

// BenchmarkConvergedSync is one converged sync through the whole handler: decode, one SHOW
// INSTANCES on a pooled connection, render, encode. Compare it with BenchmarkShowInstancesFloor,
// the Bolt round trip alone, measured in the same run.
func BenchmarkConvergedSync(b *testing.B) {
	for _, size := range benchSizes {
		b.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(b *testing.B) {
			cb := newConvergedBench(b, size[0], size[1], false)
			b.SetBytes(int64(len(cb.request)))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if code, body := cb.sync(); code != http.StatusOK {
					b.Fatalf("%d %s", code, body)
				}
			}
		})
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

// BenchmarkSyncVsBareJSON runs converged syncs and bare round trips of the same bytes in
// alternating rounds, so both see the same machine load, and reports per operation the process
// CPU time (the simulator's side of the one Bolt round trip included), allocations and bytes of
// each, and the CPU ratio sync ÷ bare (goal ≤ 1).
func BenchmarkSyncVsBareJSON(b *testing.B) {
	for _, bc := range benchCases {
		b.Run(bc.name, func(b *testing.B) {
			cb := newConvergedBench(b, bc.size[0], bc.size[1], bc.apiServerPods)
			b.ResetTimer()
			sync, bare := alternate(b.N, 64, func() {
				if code, body := cb.sync(); code != http.StatusOK {
					b.Fatalf("%d %s", code, body)
				}
			}, func() {
				if err := cb.bareRoundTrip(); err != nil {
					b.Fatal(err)
				}
			})
			b.ReportMetric(sync.cpuPerOp().Seconds()*1e6, "sync-cpu-µs/op")
			b.ReportMetric(bare.cpuPerOp().Seconds()*1e6, "bare-cpu-µs/op")
			b.ReportMetric(float64(sync.cpu)/float64(bare.cpu), "sync/bare-cpu")
			b.ReportMetric(sync.perOp(sync.allocs), "sync-allocs/op")
			b.ReportMetric(bare.perOp(bare.allocs), "bare-allocs/op")
			b.ReportMetric(sync.perOp(sync.bytes), "sync-B/op")
			b.ReportMetric(bare.perOp(bare.bytes), "bare-B/op")
		})
	}
}

// opCost accumulates what some operations cost the process.
type opCost struct {
	ops           int
	cpu           time.Duration
	allocs, bytes uint64
}

func (c *opCost) add(o opCost) {
	c.ops, c.cpu, c.allocs, c.bytes = c.ops+o.ops, c.cpu+o.cpu, c.allocs+o.allocs, c.bytes+o.bytes
}

func (c opCost) cpuPerOp() time.Duration { return c.cpu / time.Duration(max(c.ops, 1)) }

func (c opCost) perOp(v uint64) float64 { return float64(v) / float64(max(c.ops, 1)) }

// measure runs op n times and returns the process CPU time and heap allocations it took.
// alternate runs first and second n times each, in alternating rounds of at most round, so that
// both see the same machine load, and returns the cost of each.
func alternate(n, round int, first, second func()) (opCost, opCost) {
	var a, b opCost
	for done := 0; done < n; {
		k := min(n-done, round)
		a.add(measure(k, first))
		b.add(measure(k, second))
		done += k
	}
	return a, b
}

func measure(n int, op func()) opCost {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := processCPU()
	for i := 0; i < n; i++ {
		op()
	}
	cpu := processCPU() - start
	runtime.ReadMemStats(&after)
	return opCost{ops: n, cpu: cpu, allocs: after.Mallocs - before.Mallocs, bytes: after.TotalAlloc - before.TotalAlloc}
}
