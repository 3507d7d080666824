package hooks

import (
	"context"
	"errors"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// sentLog records the Bolt writes a pass sends, each query as Memgraph received it: one command
// may send several (a handover sends DEMOTE INSTANCE and SET INSTANCE TO MAIN, and a second SET
// only when the restore branch runs). The executor settles each command's queries once it has
// judged the command (settle): they are counted (memgraph_hooks_commands_total, one increment
// per query) and become status.operations records. One pass uses it from one goroutine.
type sentLog struct {
	now     func() time.Time
	count   func(kind planner.CommandKind, result string)
	pending []sentQuery
	records []topology.OperationRecord // settled, in the order sent
}

// sentQuery is one write query sent and how it ended.
type sentQuery struct {
	kind  planner.CommandKind
	query string
	err   error
	at    time.Time
}

func newSentLog(now func() time.Time, count func(planner.CommandKind, string)) *sentLog {
	return &sentLog{now: now, count: count}
}

// client wraps c so that every write it sends is recorded; reads pass through.
func (l *sentLog) client(c memgraph.Client) memgraph.Client { return sentClient{Client: c, log: l} }

// settle closes the queries the last command sent, judged as result (an executor result label:
// ok, already_done, interrupted, error, budget_exhausted): a query that succeeded counts as ok,
// one that failed under the command's result. It returns the queries, in the order sent.
func (l *sentLog) settle(result string) []string {
	queries := make([]string, 0, len(l.pending))
	for _, q := range l.pending {
		r := "ok"
		if q.err != nil {
			r = result
		}
		l.count(q.kind, r)
		l.records = append(l.records, operationRecord(q, r))
		queries = append(queries, topology.RedactCommand(q.query))
	}
	l.pending = l.pending[:0]
	return queries
}

// operationRecord is q as status.operations lists it.
func operationRecord(q sentQuery, result string) topology.OperationRecord {
	rec := topology.OperationRecord{Time: metav1.NewTime(q.at.UTC()), Command: q.query, Outcome: topology.OperationSucceeded}
	if q.err == nil {
		return rec
	}
	rec.Message = memgraphMessage(q.err)
	switch result {
	case "already_done", "ok":
		// A concurrent writer had done the work; Memgraph's refusal is kept as the message.
	case "interrupted", "budget_exhausted":
		rec.Outcome = topology.OperationInterrupted
	default:
		rec.Outcome = topology.OperationFailed
	}
	return rec
}

// memgraphMessage is Memgraph's own message for err when it carries one, else err's text.
func memgraphMessage(err error) string {
	var mg *memgraph.Error
	if errors.As(err, &mg) && mg.Message != "" {
		return mg.Message
	}
	return err.Error()
}

// sent records one write; a query the client refused to render (memgraph.Error with no Query)
// never reached Memgraph and is not recorded.
func (l *sentLog) sent(kind planner.CommandKind, query string, err error) error {
	var mg *memgraph.Error
	if errors.As(err, &mg) && mg.Query == "" {
		return err
	}
	l.pending = append(l.pending, sentQuery{kind: kind, query: query, err: err, at: l.now()})
	return err
}

// sentClient is a memgraph.Client whose writes are recorded in log.
type sentClient struct {
	memgraph.Client
	log *sentLog
}

func (c sentClient) AddCoordinator(ctx context.Context, id int, cfg memgraph.CoordinatorConfig) error {
	return c.log.sent(planner.KindAddCoordinator, memgraph.AddCoordinatorQuery(id, cfg), c.Client.AddCoordinator(ctx, id, cfg))
}

func (c sentClient) RegisterInstance(ctx context.Context, name string, cfg memgraph.InstanceConfig) error {
	return c.log.sent(planner.KindRegisterInstance, memgraph.RegisterInstanceQuery(name, cfg), c.Client.RegisterInstance(ctx, name, cfg))
}

func (c sentClient) SetInstanceToMain(ctx context.Context, name string) error {
	return c.log.sent(planner.KindSetInstanceToMain, memgraph.SetInstanceToMainQuery(name), c.Client.SetInstanceToMain(ctx, name))
}

func (c sentClient) DemoteInstance(ctx context.Context, name string) error {
	return c.log.sent(planner.KindHandover, memgraph.DemoteInstanceQuery(name), c.Client.DemoteInstance(ctx, name))
}

func (c sentClient) UnregisterInstance(ctx context.Context, name string) error {
	return c.log.sent(planner.KindUnregisterInstance, memgraph.UnregisterInstanceQuery(name), c.Client.UnregisterInstance(ctx, name))
}

func (c sentClient) RemoveCoordinator(ctx context.Context, id int) error {
	return c.log.sent(planner.KindRemoveCoordinator, memgraph.RemoveCoordinatorQuery(id), c.Client.RemoveCoordinator(ctx, id))
}

func (c sentClient) UpdateInstanceConfig(ctx context.Context, name, boltServer string) error {
	return c.log.sent(planner.KindUpdateConfig, memgraph.UpdateInstanceConfigQuery(name, boltServer),
		c.Client.UpdateInstanceConfig(ctx, name, boltServer))
}

func (c sentClient) UpdateCoordinatorConfig(ctx context.Context, id int, boltServer string) error {
	return c.log.sent(planner.KindUpdateConfig, memgraph.UpdateCoordinatorConfigQuery(id, boltServer),
		c.Client.UpdateCoordinatorConfig(ctx, id, boltServer))
}

func (c sentClient) YieldLeadership(ctx context.Context) error {
	return c.log.sent(planner.KindYieldLeadership, memgraph.YieldLeadershipQuery, c.Client.YieldLeadership(ctx))
}

func (c sentClient) ForceResetClusterState(ctx context.Context) error {
	return c.log.sent(planner.KindForceResetClusterState, memgraph.ForceResetClusterStateQuery, c.Client.ForceResetClusterState(ctx))
}
