package hooks

import (
	"context"
	"fmt"

	"github.com/memgraph-hooks/memgraph-hooks/hooks/wire"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// readDrainEvidence reads what drains need: the Nodes among the related objects (cluster-scoped,
// keyed by name; only metadata.name, spec.unschedulable and spec.taints[].key), and the pod the
// observed <cluster>-main PodDisruptionBudget selects.
func (o *observation) readDrainEvidence(req *syncRequest, c *topology.Cluster) error {
	nodes, err := wire.Entries(req.Related, "related", wire.NodeKey)
	if err != nil {
		return err
	}
	read := make([]planner.Node, 0, len(nodes))
	for _, e := range nodes {
		n := planner.Node{Name: e.Obj.Metadata.Name, Unschedulable: e.Obj.Spec.Unschedulable}
		for _, t := range e.Obj.Spec.Taints {
			n.TaintKeys = append(n.TaintKeys, t.Key)
		}
		read = append(read, n)
	}
	o.cordoned = planner.CordonedNodes(read)
	budgets, err := wire.Entries(req.Children, "children", wire.BudgetKey)
	if err != nil {
		return err
	}
	for _, e := range budgets {
		if e.Obj.Metadata.In(c.Namespace()) && e.Obj.Metadata.Name == topology.MainBudgetName(c.Name()) {
			o.mainBudgetPod = e.Obj.Spec.Selector.MatchLabels.PodName
		}
	}
	return nil
}

// drainPass is what the drain stage returns: its step, what running it achieved, and the view
// after it (zero Leader when it read none).
type drainPass struct {
	step      planner.DrainStep
	execution planner.Execution
	latest    planner.View
	progress  planner.Progress
}

// drain is the drain stage, for a pass whose plan has nothing to run: when no cordoned node runs
// the MAIN or the Raft leader (planned on the view at hand, the converged hot path), it reads
// nothing more. Otherwise it reads the leader's table and the catch-up proofs (SHOW REPLICATION
// LAG on the leader, SHOW REPLICAS on the MAIN), plans again, and unless a dry run runs the
// step — the handover or YIELD LEADERSHIP — through the executor, which re-checks the handover's
// proofs right before it (planner.DrainPrecondition). After a step it reads the table again, so
// that the MAIN's budget follows the new MAIN in this very pass.
func (h *handler) drain(ctx context.Context, conn memgraph.Connector, in *passInput, view planner.View) drainPass {
	if len(in.obs.cordoned) == 0 {
		return drainPass{}
	}
	base := planner.DrainMembers(in.declared, in.obs.podNodes, in.obs.ready, in.obs.cordoned)
	if planner.PlanDrain(planner.ReadDrain(in.declared, base, planner.Observe(view.Instances, nil, in.obs.current))).Verdict == planner.DrainNone {
		return drainPass{}
	}
	lv, err := leaderView(ctx, conn, in.declared, view)
	if err != nil {
		return drainPass{step: drainWaits("the leader's table could not be read: " + planner.Explain(err))}
	}
	if _, leadership := planner.ReadLeadership(lv.Instances); leadership != planner.LeaderReady {
		return drainPass{step: drainWaits(lv.Leader + " leads but is not ready yet")}
	}
	client := in.sent.client(conn.Client(lv.Coordinator.BoltServer))
	catchUp := catchUpReader{conn: conn, auth: in.obs.auth, declared: in.declared}
	observed := planner.Observe(lv.Instances, nil, in.obs.current)
	if observed.Lag, err = client.ShowReplicationLag(ctx); err != nil {
		observed.Lag = nil // no proof: the drain planner waits for one
	} else {
		observed.Replicas = catchUp.read(ctx, lv.Instances)
	}
	read := planner.ReadDrain(in.declared, base, observed)
	pass := drainPass{step: planner.PlanDrain(read)}
	if pass.step.Verdict != planner.DrainAct || in.dryRun {
		return pass
	}
	x := in.executor(client, catchUp, h.log)
	x.drain = &read
	pass.execution = x.execute(ctx, []planner.Command{pass.step.Command})
	if len(pass.execution.Ran) > 0 && ctx.Err() == nil {
		if after, ok := reread(ctx, client, lv.Coordinator); ok {
			pass.latest = after
			pass.progress = in.progressOn(after)
		}
	}
	return pass
}

// drainWaits is the step of a drain stage that could not read what it needs: the MAIN or leader
// on a cordoned node waits on the leader.
func drainWaits(why string) planner.DrainStep {
	return planner.DrainStep{Verdict: planner.DrainWait,
		Message: fmt.Sprintf("a node that runs the MAIN or the Raft leader is cordoned: waiting to read the cluster on its leader (%s)", why)}
}
