//go:build e2e

package e2e_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
)

// replicaSet is several hook replicas behind one address, each a handler with its own Bolt pool
// and lock map. Normally the first serves alone; while both is set, every request goes to all of
// them at once and the caller gets one answer, from each replica in turn.
type replicaSet struct {
	handlers []http.Handler
	logs     []*syncBuffer
	both     atomic.Bool
	turn     atomic.Int64
	meet     *rendezvous // the replicas' connectors meet here before their first write once armed
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

// rendezvousWait bounds how long a replica waits at the rendezvous for the others.
const rendezvousWait = 10 * time.Second

// rendezvous holds each replica's first write, once armed, until every replica has reached a
// write (or rendezvousWait has passed): both then plan and send the same step at once, however
// fast the simulator lets one of them finish a whole scale-down alone in a single pass.
type rendezvous struct {
	n       int
	mu      sync.Mutex
	armed   bool
	arrived map[int]bool
	all     chan struct{}
}

func newRendezvous(n int) *rendezvous {
	return &rendezvous{n: n, arrived: map[int]bool{}, all: make(chan struct{})}
}

func (r *rendezvous) arm() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.armed = true
}

// wait returns at once for a replica that met the others already, or while unarmed.
func (r *rendezvous) wait(replica int) {
	r.mu.Lock()
	if !r.armed || r.arrived[replica] {
		r.mu.Unlock()
		return
	}
	r.arrived[replica] = true
	if len(r.arrived) == r.n {
		close(r.all)
	}
	r.mu.Unlock()
	select {
	case <-r.all:
	case <-time.After(rendezvousWait):
	}
}

// meeting is replica's Connector: its clients meet the other replicas before a write.
type meeting struct {
	memgraph.Connector
	r       *rendezvous
	replica int
}

func (m meeting) Client(address string) memgraph.Client {
	return meetingClient{m.Connector.Client(address), m}
}

type meetingClient struct {
	memgraph.Client
	m meeting
}

func (c meetingClient) meet() { c.m.r.wait(c.m.replica) }

func (c meetingClient) AddCoordinator(ctx context.Context, id int, cfg memgraph.CoordinatorConfig) error {
	c.meet()
	return c.Client.AddCoordinator(ctx, id, cfg)
}

func (c meetingClient) RegisterInstance(ctx context.Context, name string, cfg memgraph.InstanceConfig) error {
	c.meet()
	return c.Client.RegisterInstance(ctx, name, cfg)
}

func (c meetingClient) SetInstanceToMain(ctx context.Context, name string) error {
	c.meet()
	return c.Client.SetInstanceToMain(ctx, name)
}

func (c meetingClient) DemoteInstance(ctx context.Context, name string) error {
	c.meet()
	return c.Client.DemoteInstance(ctx, name)
}

func (c meetingClient) UnregisterInstance(ctx context.Context, name string) error {
	c.meet()
	return c.Client.UnregisterInstance(ctx, name)
}

func (c meetingClient) RemoveCoordinator(ctx context.Context, id int) error {
	c.meet()
	return c.Client.RemoveCoordinator(ctx, id)
}

func (c meetingClient) UpdateInstanceConfig(ctx context.Context, name, boltServer string) error {
	c.meet()
	return c.Client.UpdateInstanceConfig(ctx, name, boltServer)
}

func (c meetingClient) UpdateCoordinatorConfig(ctx context.Context, id int, boltServer string) error {
	c.meet()
	return c.Client.UpdateCoordinatorConfig(ctx, id, boltServer)
}

func (c meetingClient) YieldLeadership(ctx context.Context) error {
	c.meet()
	return c.Client.YieldLeadership(ctx)
}

func (c meetingClient) ForceResetClusterState(ctx context.Context) error {
	c.meet()
	return c.Client.ForceResetClusterState(ctx)
}
