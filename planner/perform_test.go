package planner

import (
	"context"
	"crypto/x509"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// fakeEffects records each call a step makes, as "<effect> <address>: <query>", and answers
// from its fields.
type fakeEffects struct {
	calls       []string
	dataProblem string
	reloads     bool // the clients can send RELOAD … TLS
	leaf        *x509.Certificate
	job         RestoreJob
}

type fakeClient struct {
	memgraph.Client
	e     *fakeEffects
	where string
}

type reloadingClient struct{ fakeClient }

func (c fakeClient) call(q string) { c.e.calls = append(c.e.calls, c.where+": "+q) }

func (c fakeClient) ShowInstances(context.Context) ([]memgraph.Instance, error) {
	c.call("SHOW INSTANCES")
	return []memgraph.Instance{{Name: "data_0"}}, nil
}

func (c fakeClient) ShowReplicas(context.Context) ([]memgraph.Replica, error) {
	c.call("SHOW REPLICAS")
	return []memgraph.Replica{{Name: "data_1"}}, nil
}

func (c fakeClient) SetInstanceToMain(_ context.Context, name string) error {
	c.call(memgraph.SetInstanceToMainQuery(name))
	return errors.New("refused")
}

func (c reloadingClient) ReloadTLS(_ context.Context, query string) error {
	c.call(query)
	return nil
}

func (e *fakeEffects) client(where string) memgraph.Client {
	c := fakeClient{e: e, where: where}
	if e.reloads {
		return reloadingClient{c}
	}
	return c
}

func (e *fakeEffects) Coordinator(addr string) memgraph.Client {
	return e.client("coordinator " + addr)
}

func (e *fakeEffects) Data(addr string) (memgraph.Client, string) {
	if e.dataProblem != "" {
		return nil, e.dataProblem
	}
	return e.client("data " + addr), ""
}

func (e *fakeEffects) ServedCertificate(_ context.Context, addr string) (*x509.Certificate, error) {
	e.calls = append(e.calls, "handshake "+addr)
	return e.leaf, nil
}

func (e *fakeEffects) RestoreStatus(_ context.Context, addr, job string) (RestoreJob, string, error) {
	e.calls = append(e.calls, "agent "+addr+": status of "+job)
	return e.job, "", nil
}

func (e *fakeEffects) StartRestore(_ context.Context, addr string, s StartRestore) (RestoreJob, string, error) {
	e.calls = append(e.calls, "agent "+addr+": "+s.String())
	return e.job, "", nil
}

// Each step makes exactly the call it names, on the member it names — a data instance's with
// spec.auth's credentials — and gives back what the call answered.
func TestStepsPerformTheCallTheyName(t *testing.T) {
	leaf := &x509.Certificate{Raw: []byte("leaf")}
	running := RestoreJob{Known: true, Running: true, State: "Running"}
	for _, tc := range []struct {
		name    string
		step    Action
		effects fakeEffects
		want    Result
		calls   []string
	}{
		{name: "a coordinator's table", step: Read{What: ReadInstances, From: "c1:7687"},
			want: Result{Rows: []memgraph.Instance{{Name: "data_0"}}}, calls: []string{"coordinator c1:7687: SHOW INSTANCES"}},
		{name: "the MAIN's replicas, with spec.auth's user", step: Read{What: ReadReplicas, From: "d0:7687"},
			want: Result{Replicas: []memgraph.Replica{{Name: "data_1"}}}, calls: []string{"data d0:7687: SHOW REPLICAS"}},
		{name: "no user for the MAIN: nothing is sent", step: Read{What: ReadReplicas, From: "d0:7687"},
			effects: fakeEffects{dataProblem: "spec.auth's Secret has no password"}, want: Result{Problem: "spec.auth's Secret has no password"}},
		{name: "the certificate served", step: Read{What: ReadCertificate, From: "d0:7687"}, effects: fakeEffects{leaf: leaf},
			want: Result{Leaf: memgraph.Digest(leaf)}, calls: []string{"handshake d0:7687"}},
		{name: "the restore job", step: Read{What: ReadRestoreJob, From: "agent-0:8443", Job: "restore-1"}, effects: fakeEffects{job: running},
			want: Result{Job: running}, calls: []string{"agent agent-0:8443: status of restore-1"}},
		{name: "a command on the leader, refused", step: Write{To: "c1:7687", Command: SetInstanceToMain{Name: "data_0"}},
			want: Result{Err: errors.New("refused")}, calls: []string{`coordinator c1:7687: SET INSTANCE data_0 TO MAIN`}},
		{name: "a data instance's reload, with spec.auth's user", effects: fakeEffects{reloads: true},
			step: Write{To: "d0:7687", Command: ReloadTLS{Member: "data_0", Query: "RELOAD BOLT_SERVER TLS"}, Auth: true},
			want: Result{}, calls: []string{"data d0:7687: RELOAD BOLT_SERVER TLS"}},
		{name: "a connector that cannot reload: nothing is sent", step: Write{To: "c1:7687", Command: ReloadTLS{Member: "coordinator_1", Query: "RELOAD BOLT_SERVER TLS"}},
			want: Result{Problem: "this hook's Bolt connector cannot send RELOAD … TLS"}},
		{name: "a restore started", effects: fakeEffects{job: running},
			step: Write{To: "agent-0:8443", Command: StartRestore{Job: "restore-1", Into: topology.DataInstance{Member: topology.Member{Name: "data_0"}}}},
			want: Result{Job: running}, calls: []string{"agent agent-0:8443: start restore job restore-1 into data_0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.step.Perform(context.Background(), &tc.effects)
			if diff := cmp.Diff(tc.want, got, cmp.Comparer(func(a, b error) bool { return (a == nil) == (b == nil) && (a == nil || a.Error() == b.Error()) })); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.calls, tc.effects.calls); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
		})
	}
}

// A step says how it runs in the budget: a settled read's delay, a discovery read's share, a
// handover's grace.
func TestStepsStateTheirTiming(t *testing.T) {
	for _, tc := range []struct {
		step Action
		want Timing
	}{
		{Read{What: ReadInstances, From: "c1", Share: 3}, Timing{Share: 3}},
		{Read{What: ReadInstances, From: "c1", After: 2 * time.Second}, Timing{After: 2 * time.Second}},
		{Read{What: ReadLag, From: "c1", Grace: true}, Timing{Grace: HandoverGrace}},
		{Write{To: "c1", Command: SetInstanceToMain{Name: "data_0"}, Grace: true}, Timing{Grace: HandoverGrace}},
		{Write{To: "c1", Command: SetInstanceToMain{Name: "data_0"}}, Timing{}},
	} {
		if got := tc.step.Timing(); got != tc.want {
			t.Errorf("%+v: timing %+v, want %+v", tc.step, got, tc.want)
		}
	}
}
