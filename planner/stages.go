package planner

import (
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// stages are a pass's stages in order. Each reads what it needs, adds what it found to the
// outcome, and says whether the pass goes on: the first stage that cannot go on ends it.
var stages = [...]struct {
	name string
	run  func(*pass) flow
}{
	// While it hibernates or wakes the cluster, nothing else runs: no plan, no Bolt write.
	{"hibernation", (*pass).hibernate},
	// spec.tls cannot be honoured, or declared pods are not Ready: no write (the cluster is
	// only read for the status) — unless a rollout is in progress, which then plans on the
	// leader's table.
	{"gates", (*pass).gates},
	{"discovery", (*pass).discovery},
	// spec.bootstrap.fromBackup holds registration until the backup is restored.
	{"restore", (*pass).restore},
	{"rollout while pods are down", (*pass).rolloutWhileDown},
	// The plan on the view, which may settle the pass there, or on the leader's own table, executed there.
	{"plan", (*pass).plan},
	// The stages that wait for a plan with nothing left to run.
	{"drain", (*pass).drain},
	{"settings", (*pass).settings},
	{"rotation", (*pass).rotate},
}

// run runs the stages; the outcome's rollout is the one the pass reports (PassRollout).
func (p *pass) run() flow {
	for _, s := range stages {
		switch s.run(p) {
		case waiting:
			return waiting
		case stop:
			return p.complete()
		}
	}
	return p.complete()
}

// complete completes the outcome with what every pass reports, whichever stage ended it: the
// rollout's step, what the request showed, status.replicas, and the replica lag for the gauge
// when it is due.
func (p *pass) complete() flow {
	if !p.hibernation.InCharge {
		p.out.Rollout = PassRollout(p.out, p.rolloutInput(p.out.Replicas))
	}
	p.out.Paused, p.out.Hibernation = p.paused(), p.hibernation
	p.out.PodReady, p.out.Problems, p.out.MissingSecrets = p.in.PodReady, p.in.Problems, p.in.MissingSecrets
	p.out.PodNodes, p.out.ClusterTLSProblem, p.out.MainBudgetHeld = p.in.PodNodes, p.in.TLS.ClusterProblem, p.in.MainBudgetPod
	if p.replicaHealth() == waiting {
		return waiting
	}
	return p.readLag()
}

func (p *pass) paused() bool {
	paused, _ := p.in.Cluster.Paused()
	return paused
}

// hibernate asks PlanHibernation for the pass's part in hibernating or waking, reading which
// instance is MAIN (discovery's view) when the step depends on it. It never writes; the view,
// when one was read, is the status's.
func (p *pass) hibernate() flow {
	c, in := p.in.Cluster, p.in
	hi := HibernationInput{Declared: p.d, Hibernate: c.Hibernate(), Window: in.Window}
	if !HibernationAsleepOrWaking(hi.Hibernate, hi.Window) {
		p.hibernation = PlanHibernation(hi) // a running cluster: the converged hot path
		return goOn
	}
	hi.CoordinatorPods, hi.DataPods = podsByOrdinal(c.Name(), p.workloads)
	hi.Span, hi.Returned = in.Span, in.Returned
	hi.Now = metav1.NewTime(in.Now)
	hi.StartupBudget = metav1.Duration{Duration: time.Duration(c.DataStartupBudgetSeconds()) * time.Second}
	// Hibernation does not begin while a rollout of the returned replica counts holds it.
	if hi.Hibernate {
		hi.RolloutPending = RolloutHoldingHibernation(p.rolloutWithoutView(), *p.workloads)
	}
	step := PlanHibernation(hi)
	if step.NeedsView {
		if in.TLS.Problem != "" {
			hi.ViewProblem = in.TLS.Problem
		} else {
			order := DiscoveryOrder(p.d)
			found, f := p.discover(order, len(order))
			switch {
			case f == waiting:
				return waiting
			case found.Found():
				hi.View = &found.View
			case found.NotReady != "":
				hi.ViewProblem = found.NotReady + " leads but is not ready yet"
			default:
				hi.ViewProblem = "no coordinator named a ready leader: " + strings.Join(found.Problems, "; ")
			}
		}
		step = PlanHibernation(hi)
	}
	p.hibernation = step
	if !step.InCharge {
		return goOn
	}
	p.out = Outcome{Declared: p.d, DryRun: in.DryRun, Replicas: step.Replicas,
		Rollout: HibernationRollout(step, p.rolloutInput(step.Replicas))}
	if hi.View != nil {
		p.out.Latest, p.out.Progress = *hi.View, p.progressOn(*hi.View)
	}
	return stop
}

// podsByOrdinal are each role's pods by ordinal (a coordinator's by id), in any state.
func podsByOrdinal(cluster string, w *Workloads) (coordinators, data map[int]PodState) {
	byOrdinal := func(s RolloutSet, r topology.RoleSet) map[int]PodState {
		out := make(map[int]PodState, len(s.Pods))
		for _, pod := range s.Pods {
			out[pod.Index+r.First] = PodState{Ready: pod.Ready, Created: pod.Created}
		}
		return out
	}
	rs := topology.RoleSets(cluster)
	return byOrdinal(w.Coordinators, rs[0]), byOrdinal(w.Data, rs[1])
}

// gates: spec.tls cannot be honoured (no Bolt at all), the budget ran out before the cluster's
// lock, or declared pods are not Ready, when the pass only reads the cluster for the status —
// unless a rollout is in progress, whose step then rests on the leader's table.
func (p *pass) gates() flow {
	p.out = Outcome{Declared: p.d, DryRun: p.in.DryRun, Replicas: p.held, AtDeclaredSize: p.atDeclared()}
	if p.out.TLSProblem = p.in.TLS.Problem; p.out.TLSProblem != "" {
		return stop
	}
	p.out.WaitingPods = p.unreadyPods()
	p.rolling = len(p.out.WaitingPods) > 0 && p.rolloutWithoutView().InProgress()
	if p.expired {
		return stop // the budget ran out before any coordinator was asked
	}
	if len(p.out.WaitingPods) > 0 && !p.rolling {
		var f flow
		if p.out.Latest, p.out.Progress, f = p.readWhileWaiting(); f == waiting {
			return waiting
		}
		return stop
	}
	return goOn
}

// atDeclared reports whether both StatefulSets are at the declared size and their controller
// has caught up with it.
func (p *pass) atDeclared() bool {
	return p.in.Span.Coordinators == int32(len(p.d.Coordinators)) &&
		p.in.Span.DataInstances == int32(len(p.d.DataInstances)) && p.in.SetsReconciled == [2]bool{true, true}
}

// unreadyPods lists the declared pods that are missing or not Ready, sorted.
func (p *pass) unreadyPods() []string {
	var waiting []string
	coordinators, data := p.d.PodNames()
	for _, pod := range append(coordinators, data...) {
		if !p.in.PodReady[pod] {
			waiting = append(waiting, pod)
		}
	}
	slices.Sort(waiting)
	return waiting
}

// discovery chooses the view to plan on (Discover); without one the pass ends.
func (p *pass) discovery() flow {
	order := DiscoveryOrder(p.d)
	var f flow
	if p.out.Discovery, f = p.discover(order, len(order)); f == waiting {
		return waiting
	}
	if !p.out.Discovery.Found() {
		return stop
	}
	return goOn
}

// rolloutWhileDown plans the rollout alone on the leader's own table for a pass whose pods are
// not all Ready: it runs no step, and reports the leader's view, the progress it shows and the
// rollout's step (none when the leader cannot be read or is not ready).
func (p *pass) rolloutWhileDown() flow {
	if !p.rolling {
		return goOn
	}
	lv, ok, f := p.readyLeaderView(p.out.Discovery.View)
	switch {
	case f == waiting:
		return waiting
	case !ok:
		p.out.Latest, p.out.Progress, p.out.Rollout = View{}, Progress{}, RolloutStep{}
		return stop
	}
	observed := Observe(lv.Instances, nil, p.in.Span)
	p.out.Latest, p.out.Progress = lv, Decide(p.d, observed).Progress
	p.out.Rollout = PlanRollout(RolloutInput{Declared: p.d, Replicas: p.held, Workloads: *p.workloads, Cluster: &observed})
	return stop
}

// plan plans on discovery's view. A view that settles the pass (Settled) ends the reading there
// — the converged pass costs one query — and so does a pause. Otherwise the plan rests on the
// leader's own table (onLeader). The stages after it run only when the plan has nothing to do.
func (p *pass) plan() flow {
	view := p.out.Discovery.View
	observed := p.observe(view.Instances)
	plan := Decide(p.d, observed)
	p.out.Latest, p.out.Progress = view, plan.Progress
	if p.paused() || SettlesPass(plan, view, p.held) {
		p.out.Plan, p.out.Replicas = plan, plan.Replicas
		if p.paused() {
			return stop
		}
		return goOn
	}
	planned, f := p.onLeader(view)
	if f == waiting {
		return waiting
	}
	if planned && len(p.out.Plan.Commands) == 0 {
		return goOn // a drain's step waits for the plan's steps
	}
	return stop
}

// onLeader reads the cluster on the leader (writes go there, and the plan must rest on the
// authoritative table), plans, and when the plan needs the catch-up proofs (a MAIN handover may
// be due) reads them and plans again with them. Unless a dry run, it executes the plan and, when
// a step ran, reads the cluster once more to report what the steps changed. planned is false
// when it could not plan (LeaderErr, LeaderNotReady).
func (p *pass) onLeader(found View) (planned bool, f flow) {
	lv, f, err := p.leaderView(found)
	switch {
	case f == waiting:
		return false, waiting
	case err != nil:
		p.out.LeaderErr = err
		return false, goOn
	}
	if _, leadership := ReadLeadership(lv.Instances); leadership == LeaderNotReady {
		p.out.LeaderNotReady = lv.Leader // its table is no evidence: plan nothing
		return false, goOn
	}
	observed := p.observe(lv.Instances)
	plan := Decide(p.d, observed)
	p.out.Latest, p.out.Progress = lv, plan.Progress
	if plan.NeedsCatchUpReads {
		f, err := p.catchUp(lv, &observed)
		switch {
		case f == waiting:
			return false, waiting
		case err != nil:
			p.out.LeaderErr = fmt.Errorf("SHOW REPLICATION LAG on %s: %w", lv.Coordinator.Name, err)
			return false, goOn
		}
		plan = Decide(p.d, observed)
		p.out.Progress = plan.Progress
	}
	p.out.MainReplicas = observed.Replicas
	p.out.Plan, p.out.Replicas = plan, plan.Replicas
	if p.in.DryRun || len(plan.Commands) == 0 {
		return true, goOn
	}
	if p.out.Execution, f = p.execute(lv.Coordinator.BoltServer, plan.Commands, p.planGuard); f == waiting {
		return true, waiting
	}
	if len(p.out.Execution.Ran) > 0 && !p.expired {
		after, ok, f := p.reread(lv.Coordinator)
		if f == waiting {
			return true, waiting
		}
		if ok {
			p.out.Latest, p.out.Progress = after, p.progressOn(after)
		}
	}
	return true, goOn
}
