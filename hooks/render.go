package hooks

import (
	"errors"
	"fmt"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// render builds the response: the desired children at the permitted replica counts, and the
// status observed in this pass.
func (h *handler) render(p *pass) (*syncResponse, error) {
	children, err := topology.DesiredChildren(p.cluster, p.replicas)
	if err != nil {
		return nil, err
	}
	ready, converged, resync := p.verdicts()
	p.outcome = converged.reason
	status := p.status(h.cfg.Now(), ready, converged)
	statusMap, err := toMap(status)
	if err != nil {
		return nil, err
	}
	resp := &syncResponse{Status: statusMap, Children: children, ResyncAfterSeconds: resync}
	if p.dryRun {
		resp.Plan = append([]string{}, p.planned...)
		if resp.Plan == nil {
			resp.Plan = []string{}
		}
	}
	return resp, nil
}

// verdicts decides the two conditions and the resync delay.
func (p *pass) verdicts() (ready, converged verdict, resync float64) {
	switch {
	case p.tlsProblem != "":
		// Checked before the pods: a missing or unusable Secret is usually why they are not Ready.
		v := isFalse(ReasonTLSConfigInvalid, "%s", p.tlsProblem)
		return v, v, resyncWaiting
	case len(p.waitingPods) > 0:
		v := isFalse(ReasonWorkloadsNotReady, "waiting for %s to be Ready: %s",
			describeCount(len(p.waitingPods), "pod"), listNames(p.waitingPods))
		return v, v, resyncWaiting
	case p.starved:
		v := isFalse(ReasonRegistrationInProgress, "the sync budget ran out before the coordinators were asked; continuing on the next sync")
		return v, v, resyncBudgetExhausted
	case p.obs.view.leader == "" && !p.obs.reachable:
		v := isFalse(ReasonCoordinatorUnreachable, "no coordinator answered SHOW INSTANCES: %s", listNames(p.obs.errs))
		return v, v, resyncWaiting
	case p.obs.view.leader == "" && p.obs.notReady != "":
		v := notReadyVerdict(p.obs.notReady)
		return v, v, resyncProgressing
	case p.obs.view.leader == "":
		v := isFalse(ReasonNoCoordinatorLeader, "coordinators answer but none names a leader: %s", listNames(p.obs.errs))
		return v, v, resyncWaiting
	case p.notReady != "":
		v := notReadyVerdict(p.notReady)
		return v, v, resyncProgressing
	}
	ready = p.readyVerdict()
	converged, resync = p.convergedVerdict()
	return ready, converged, resync
}

// notReadyVerdict: a leader that has not finished reconciling answers its local Raft copy with
// every health unknown and refuses every write; that is no leader yet, not news about instances.
func notReadyVerdict(leader string) verdict {
	return isFalse(ReasonNoCoordinatorLeader, "%s leads but is not ready yet (it is reconciling after an election or a "+
		"FORCE RESET and reports every health unknown); nothing is planned until it is", leader)
}

func (p *pass) readyVerdict() verdict {
	if p.leaderErr != nil {
		return isFalse(ReasonCoordinatorUnreachable, "leader %s: %s", p.obs.view.leader, errMessage(p.leaderErr))
	}
	if main := mainName(p.final.instances); main != "" {
		return isTrue(ReasonMainElected, "%s is MAIN; %s leads the coordinators", main, p.final.leader)
	}
	return isFalse(ReasonNoMainElected, "no data instance is MAIN; %s leads the coordinators", p.final.leader)
}

func (p *pass) convergedVerdict() (verdict, float64) {
	prog := p.plan.Progress
	now := prog // progress as of the latest read: the plan's, unless the cluster was re-read after executing
	if p.reread {
		now = planner.Plan(p.declared, planner.Observed{
			Instances: p.final.instances, Leader: p.final.leader, Current: p.work.current,
		}).Progress
	}
	switch {
	case p.leaderErr != nil:
		return isFalse(ReasonCoordinatorUnreachable, "leader %s: %s", p.obs.view.leader, errMessage(p.leaderErr)), resyncWaiting
	case p.ex.err != nil:
		var halfJoined *planner.HalfJoinedError
		if errors.As(p.ex.err, &halfJoined) {
			return halfJoinedVerdict([]string{halfJoined.Coordinator}), resyncWaiting
		}
		return isFalse(ReasonRegistrationFailed, "%s failed: %s", p.ex.failedQuery, errMessage(p.ex.err)), resyncWaiting
	case p.ex.stoppedBy != "" && p.ex.stopped == planner.StepInProgress:
		return isFalse(ReasonFailoverInProgress, "%s is still running on %s: the leader is settling the MAIN (Memgraph "+
			"promotes the most up-to-date replica); re-observing on the next sync", p.ex.stoppedBy, p.final.leader), resyncProgressing
	case p.ex.stoppedBy != "":
		return isFalse(ReasonLeadershipTransferInProgress, "%s did not run: %s; finding the leader again on the next sync",
			p.ex.stoppedBy, p.ex.stopMessage), resyncProgressing
	case len(now.HalfJoined) > 0:
		return halfJoinedVerdict(now.HalfJoined), resyncWaiting
	case prog.NoCaughtUpSurvivor != "":
		return isFalse(ReasonNoCaughtUpSurvivor, "%s", prog.NoCaughtUpSurvivor), resyncWaiting
	case prog.YieldPending || now.YieldPending:
		return isFalse(ReasonLeadershipTransferInProgress, "%s is retiring and yields leadership; waiting for a new leader", p.obs.view.leader), resyncProgressing
	case len(now.RetiringCoordinators)+len(now.RetiringDataInstances) > 0 || p.shrinking():
		if names := append(append([]string{}, now.RetiringCoordinators...), now.RetiringDataInstances...); len(names) > 0 {
			return isFalse(ReasonRetirementInProgress, "retiring %s", listNames(names)), resyncProgressing
		}
		return isFalse(ReasonRetirementInProgress, "unregistered %s; waiting for their pods to go", listNames(p.retiringNames())), resyncProgressing
	case p.ex.budgetExhausted:
		return isFalse(ReasonRegistrationInProgress, "the sync budget ran out after %d of %d steps; continuing on the next sync",
			len(p.ex.ran), len(p.planned)), resyncBudgetExhausted
	case len(now.PendingCoordinators)+len(now.PendingDataInstances) > 0:
		pending := append(append([]string{}, now.PendingCoordinators...), now.PendingDataInstances...)
		return isFalse(ReasonRegistrationInProgress, "registering %s", listNames(pending)), resyncProgressing
	case p.dryRun && len(p.planned) > 0:
		return isFalse(ReasonRegistrationInProgress, "dry run: %d planned steps not executed", len(p.planned)), resyncProgressing
	case !p.workloadsAtDeclared():
		return isFalse(ReasonWorkloadsNotReady, "StatefulSets are not yet at %d coordinators and %d data instances",
			len(p.declared.Coordinators), len(p.declared.DataInstances)), resyncWaiting
	}
	return isTrue(ReasonAllInstancesRegistered, "%s and %s registered%s",
		describeCount(len(p.declared.Coordinators), "coordinator"),
		describeCount(len(p.declared.DataInstances), "data instance"), driftNote(now.Drift)), resyncConverged
}

// halfJoinedVerdict names Raft members the leader's application log lacks (memgraph-ha.md
// §11.1): a human has to act, and must know why the hook will not.
func halfJoinedVerdict(names []string) verdict {
	verb := "is a Raft member"
	if len(names) > 1 {
		verb = "are Raft members"
	}
	return isFalse(ReasonCoordinatorHalfJoined, "%s %s without a bolt_server (half-joined: ADD COORDINATOR timed out and "+
		"the join completed later). The hook will not remove it: removing a half-joined member would stop the leader "+
		"process. Memgraph refuses to add it again (its id exists); it is registered once it leads (the hook then adds it "+
		"as itself)", listNames(names), verb)
}

// driftNote tells of registrations whose addresses differ from the declared ones: the hook
// does not rewrite them (planner package doc), so a human should know.
func driftNote(drift []planner.Drift) string {
	if len(drift) == 0 {
		return ""
	}
	var parts []string
	for _, d := range drift {
		parts = append(parts, fmt.Sprintf("%s %s is %q, declared %q", d.Name, d.Field, d.Observed, d.Declared))
	}
	return "; registered with other addresses than declared (not rewritten): " + listNames(parts)
}

// shrinking reports a StatefulSet still above its declared count.
func (p *pass) shrinking() bool {
	return len(p.declared.RetiringCoordinators)+len(p.declared.RetiringDataInstances) > 0
}

func (p *pass) retiringNames() []string {
	var names []string
	for _, c := range p.declared.RetiringCoordinators {
		names = append(names, c.Name)
	}
	for _, d := range p.declared.RetiringDataInstances {
		names = append(names, d.Name)
	}
	return names
}

func (p *pass) workloadsAtDeclared() bool {
	return p.work.current.Coordinators == int32(len(p.declared.Coordinators)) &&
		p.work.current.DataInstances == int32(len(p.declared.DataInstances)) &&
		p.work.settledCoordinators && p.work.settledData
}

func registeredCounts(rows []memgraph.Instance) (coordinators, data int32) {
	for _, r := range rows {
		switch {
		case r.IsCoordinator() && r.BoltServer != "":
			coordinators++
		case !r.IsCoordinator():
			data++
		}
	}
	return coordinators, data
}

func podNames(d topology.Declared) (coordinators, data []string) {
	for _, c := range d.Coordinators {
		coordinators = append(coordinators, c.Pod)
	}
	for _, di := range d.DataInstances {
		data = append(data, di.Pod)
	}
	return coordinators, data
}
