package planner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
)

// recordingEffects records every call a step makes of the shell, and answers each.
type recordingEffects struct{ calls []string }

func (e *recordingEffects) call(format string, args ...any) {
	e.calls = append(e.calls, fmt.Sprintf(format, args...))
}

func (e *recordingEffects) Reach() ([]string, string) {
	e.call("reach")
	return []string{"no CA"}, "no token"
}
func (e *recordingEffects) ShowInstances(_ context.Context, from string, share int) ([]memgraph.Instance, error) {
	e.call("SHOW INSTANCES on %s, share %d", from, share)
	return coords(3, 1), nil
}
func (e *recordingEffects) ShowReplicationLag(_ context.Context, from string) ([]memgraph.InstanceLag, error) {
	e.call("SHOW REPLICATION LAG on %s", from)
	return nil, errors.New("timeout")
}
func (e *recordingEffects) ShowReplicas(_ context.Context, from string) ([]memgraph.Replica, error) {
	e.call("SHOW REPLICAS on %s", from)
	return []memgraph.Replica{{Name: "instance_1"}}, nil
}
func (e *recordingEffects) Jobs(_ context.Context, agents []string, id string) []AgentAnswer {
	e.call("jobs %s on %s", id, strings.Join(agents, ","))
	return []AgentAnswer{{Err: "down"}, {Job: AgentJob{Completed: true}}}
}
func (e *recordingEffects) Job(_ context.Context, agent, id string) AgentAnswer {
	e.call("job %s on %s", id, agent)
	return AgentAnswer{Unknown: true, Err: "no job"}
}
func (e *recordingEffects) StartJob(_ context.Context, s BackupStartJob) AgentAnswer {
	e.call("start %s on %s as %s", s.ID, s.Agent.Address, s.Role)
	return AgentAnswer{Status: 409, Message: "read-only", Err: "409: read-only"}
}
func (e *recordingEffects) ReadStore() string {
	e.call("read store")
	return "no credentials"
}
func (e *recordingEffects) RemoveObject(_ context.Context, key string) error {
	e.call("remove %s", key)
	return errors.New("AccessDenied")
}

// Each step performs itself with one call of the shell and gives back what the call gave,
// deciding nothing; a read says whether the pass's budget had run out by its end.
func TestBackupStepsPerformThemselves(t *testing.T) {
	expired, cancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancel()
	for _, tc := range []struct {
		step BackupStep
		ctx  context.Context
		call string
		want BackupResult
	}{
		{BackupReach{}, context.Background(), "reach", BackupResult{Problems: []string{"no CA"}, Problem: "no token"}},
		{BackupFindJob{ID: "b1", Agents: []BackupAgent{{Address: "a0:8443"}, {Address: "a1:8443"}}}, context.Background(), "jobs b1 on a0:8443,a1:8443",
			BackupResult{Agents: []AgentAnswer{{Err: "down"}, {Job: AgentJob{Completed: true}}}}},
		{backupShowInstances{from: "c1:7687", share: 2}, expired, "SHOW INSTANCES on c1:7687, share 2",
			BackupResult{Instances: coords(3, 1), Expired: true}},
		{backupShowLag{from: "c1:7687"}, context.Background(), "SHOW REPLICATION LAG on c1:7687", BackupResult{QueryErr: errors.New("timeout")}},
		{backupShowReplicas{from: "d0:7687"}, context.Background(), "SHOW REPLICAS on d0:7687", BackupResult{Replicas: []memgraph.Replica{{Name: "instance_1"}}}},
		{BackupStartJob{ID: "b1", Agent: BackupAgent{Address: "a1:8443"}, Role: "replica"},
			context.Background(), "start b1 on a1:8443 as replica", BackupResult{Agent: AgentAnswer{Status: 409, Message: "read-only", Err: "409: read-only"}}},
		{BackupPollJob{Address: "a1:8443", ID: "b1"}, context.Background(), "job b1 on a1:8443", BackupResult{Agent: AgentAnswer{Unknown: true, Err: "no job"}}},
		{BackupReadStore{}, context.Background(), "read store", BackupResult{Problem: "no credentials"}},
		{BackupRemove{Key: "p/k"}, context.Background(), "remove p/k", BackupResult{Err: "AccessDenied"}},
	} {
		e := &recordingEffects{}
		got := tc.step.Perform(tc.ctx, e)
		if diff := cmp.Diff([]string{tc.call}, e.calls); diff != "" {
			t.Errorf("%T: calls (-want +got):\n%s", tc.step, diff)
		}
		if diff := cmp.Diff(tc.want, got, cmp.Comparer(func(a, b error) bool { return fmt.Sprint(a) == fmt.Sprint(b) })); diff != "" {
			t.Errorf("%T: result (-want +got):\n%s", tc.step, diff)
		}
	}
	e := &recordingEffects{}
	if got := (BackupDone{}).Perform(context.Background(), e); len(e.calls) > 0 || !cmp.Equal(got, BackupResult{}) {
		t.Errorf("BackupDone performed %v", e.calls)
	}
}
