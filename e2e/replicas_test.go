//go:build e2e

package e2e_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
)

// replicaSet is several hook replicas behind one address, each a handler with its own Bolt pool
// and lock map. Normally the first serves alone; while both is set, every request goes to all of
// them at once and the caller gets one answer, from each replica in turn.
type replicaSet struct {
	handlers []http.Handler
	logs     []*syncBuffer
	both     atomic.Bool
	turn     atomic.Int64
}

func (rs *replicaSet) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !rs.both.Load() {
		rs.handlers[0].ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	recs := make([]*httptest.ResponseRecorder, len(rs.handlers))
	var wg sync.WaitGroup
	for i, h := range rs.handlers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := r.Clone(r.Context())
			req.Body = io.NopCloser(bytes.NewReader(body))
			recs[i] = httptest.NewRecorder()
			h.ServeHTTP(recs[i], req)
		}()
	}
	wg.Wait()
	answer := recs[int(rs.turn.Add(1))%len(recs)]
	for k, v := range answer.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(answer.Code)
	_, _ = w.Write(answer.Body.Bytes())
}

// logMarks are the current lengths of the replicas' logs.
func (rs *replicaSet) logMarks() []int {
	var out []int
	for _, l := range rs.logs {
		out = append(out, len(l.String()))
	}
	return out
}

// plannedPassesSince counts, per replica, the passes logged after marks that planned a step.
func (rs *replicaSet) plannedPassesSince(marks []int) []int {
	var out []int
	for i, l := range rs.logs {
		out = append(out, plannedPasses(l.String()[marks[i]:]))
	}
	return out
}
