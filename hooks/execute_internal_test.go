package hooks

import (
	"context"
	"crypto/x509"
	"errors"
	"testing"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
)

func TestCommandsRunTheQueryTheyPrint(t *testing.T) {
	plan := planner.Decide(declared(5, 3, 5, 4), planner.Observe(
		rows(one(freshSelf(5)), one(replica(0), replica(1), replica(2), replica(3))), nil, replicas(5, 4)))
	rec := &recordingClient{}
	for _, cmd := range plan.Commands {
		before := len(rec.calls)
		if got := (planner.Write{To: "leader", Command: cmd}).Perform(context.Background(), leaderOnly{rec}); got.Err != nil || got.Problem != "" {
			t.Fatalf("%s: %v %s", cmd, got.Err, got.Problem)
		}
		if got := rec.calls[before:]; len(got) != 1 || got[0] != cmd.String() {
			t.Errorf("%T printed %q but ran %q", cmd, cmd.String(), got)
		}
	}
	if len(plan.Commands) == 0 {
		t.Fatal("fixture produced no commands")
	}
}

// leaderOnly are effects with one client, the leader's.
type leaderOnly struct{ memgraph.Client }

func (l leaderOnly) Coordinator(string) memgraph.Client  { return l.Client }
func (leaderOnly) Data(string) (memgraph.Client, string) { return nil, "no data instance here" }
func (leaderOnly) ServedCertificate(context.Context, string) (*x509.Certificate, error) {
	return nil, errors.New("no handshake here")
}
func (leaderOnly) RestoreStatus(context.Context, string, string) (planner.RestoreJob, string, error) {
	return planner.RestoreJob{}, "no agent here", nil
}
func (leaderOnly) StartRestore(context.Context, string, planner.StartRestore) (planner.RestoreJob, string, error) {
	return planner.RestoreJob{}, "no agent here", nil
}

// recordingClient renders every call with the memgraph package's own renderers.
type recordingClient struct {
	memgraph.Client
	calls []string
}

func (r *recordingClient) AddCoordinator(_ context.Context, id int, cfg memgraph.CoordinatorConfig) error {
	r.calls = append(r.calls, memgraph.AddCoordinatorQuery(id, cfg))
	return nil
}

func (r *recordingClient) RegisterInstance(_ context.Context, name string, cfg memgraph.InstanceConfig) error {
	r.calls = append(r.calls, memgraph.RegisterInstanceQuery(name, cfg))
	return nil
}

func (r *recordingClient) SetInstanceToMain(_ context.Context, name string) error {
	r.calls = append(r.calls, memgraph.SetInstanceToMainQuery(name))
	return nil
}

func (r *recordingClient) UnregisterInstance(_ context.Context, name string) error {
	r.calls = append(r.calls, memgraph.UnregisterInstanceQuery(name))
	return nil
}

func (r *recordingClient) RemoveCoordinator(_ context.Context, id int) error {
	r.calls = append(r.calls, memgraph.RemoveCoordinatorQuery(id))
	return nil
}

func (r *recordingClient) ForceResetClusterState(context.Context) error {
	r.calls = append(r.calls, memgraph.ForceResetClusterStateQuery)
	return nil
}

func (r *recordingClient) YieldLeadership(context.Context) error {
	r.calls = append(r.calls, memgraph.YieldLeadershipQuery)
	return nil
}
