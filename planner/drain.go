package planner

import (
	"fmt"
	"strings"

	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// The drain planner decides what the hook does when a node that runs the MAIN or the Raft leader
// is cordoned, which is how kubectl drain, the cluster autoscaler and managed node upgrades
// start. A drain evicts through the Eviction API, so PodDisruptionBudgets pace it
// (topology/budgets.go): one coordinator and one data instance at a time, and never the MAIN's
// pod while the MAIN's budget selects it. The hook's part is to move MAIN off the node first, so
// that the budget can follow it and the drain proceed without a failover.
//
// MAIN first, then leadership. The MAIN's pod is the one a budget holds (maxUnavailable 0): the
// drain waits on it, and only the hook can release it. The leader's pod is held by nothing more
// than the coordinators' budget, so the drain may evict it at any moment whatever the hook does;
// yielding first would buy nothing and would cost an election, during which the new leader
// reconciles and refuses the handover's writes (LeaderNotReady). The handover runs on a leader
// that is up, in one pass; YIELD LEADERSHIP follows in the next, if the leader's pod is still
// there.

// DrainMember is one member as the drain planner sees it.
type DrainMember struct {
	Name  string // as SHOW INSTANCES names it: coordinator_<id> or instance_<ordinal>
	Role  string // topology.RoleCoordinator or topology.RoleData
	Pod   string
	Node  string // the pod's spec.nodeName; "" while the pod is not scheduled
	Ready bool   // the pod is Ready and not terminating
}

// DrainInput is what a pass knows when it plans for drains.
type DrainInput struct {
	Members  []DrainMember   // every declared member, in declared order
	Main     string          // the MAIN's name; "" when there is none
	Leader   string          // the Raft leader's name; "" when there is none
	Cordoned map[string]bool // CordonedNodes of the nodes the members run on
	// CaughtUp are the data instances proven caught up with the MAIN on every database.
	CaughtUp map[string]bool
}

// DrainVerdict says what the pass does about drains.
type DrainVerdict int

const (
	// DrainNone: neither the MAIN nor the leader runs on a cordoned node, or nothing the hook
	// does would help; the role budgets pace the drain alone.
	DrainNone DrainVerdict = iota
	// DrainAct: run Command (a Handover, or YieldLeadership).
	DrainAct
	// DrainWait: the step the drain needs is not possible yet and may become so; Message says
	// what is awaited.
	DrainWait
	// DrainBlocked: the MAIN's budget holds the drain for a reason the hook cannot fix; Message
	// says what the user can do.
	DrainBlocked
)

// DrainStep is the drain planner's decision. Every verdict but DrainNone is reported as
// Converged=False with reason v1alpha1.ReasonDrainPending and Message.
type DrainStep struct {
	Verdict DrainVerdict
	Command Command // with DrainAct: Handover or YieldLeadership
	Node    string  // the cordoned node the step is about
	Message string
}

// PlanDrain decides the pass's drain step: a MAIN on a cordoned node is handed over first, then
// a leader on a cordoned node yields.
func PlanDrain(in DrainInput) DrainStep {
	if step, ok := drainMain(in); ok {
		return step
	}
	if step, ok := drainLeader(in); ok {
		return step
	}
	return DrainStep{}
}

func findDrainMember(members []DrainMember, name string) (DrainMember, bool) {
	for _, m := range members {
		if name != "" && m.Name == name {
			return m, true
		}
	}
	return DrainMember{}, false
}

// cordonedMember is the member called name when it runs on a cordoned node.
func (in DrainInput) cordonedMember(name string) (DrainMember, bool) {
	m, ok := findDrainMember(in.Members, name)
	return m, ok && m.Node != "" && in.Cordoned[m.Node]
}

// schedulable: the member's pod runs on a node that is not cordoned.
func (in DrainInput) schedulable(m DrainMember) bool { return m.Node != "" && !in.Cordoned[m.Node] }

// drainMain hands a MAIN on a cordoned node over to the first replica, in declared order, that
// is Ready, proven caught up and on a schedulable node. ok is false when the MAIN's node is not
// cordoned.
func drainMain(in DrainInput) (DrainStep, bool) {
	main, ok := in.cordonedMember(in.Main)
	if !ok {
		return DrainStep{}, false
	}
	head := fmt.Sprintf("node %s is cordoned and runs the MAIN %s (pod %s)", main.Node, main.Name, main.Pod)
	var replicas, waiting []string
	for _, m := range in.Members {
		if m.Role != topology.RoleData || m.Name == main.Name {
			continue
		}
		replicas = append(replicas, m.Name)
		switch {
		case m.Node == "":
			waiting = append(waiting, m.Name+" is not scheduled")
		case in.Cordoned[m.Node]:
		case !m.Ready:
			waiting = append(waiting, fmt.Sprintf("%s on %s is not Ready", m.Name, m.Node))
		case !in.CaughtUp[m.Name]:
			waiting = append(waiting, fmt.Sprintf("%s on %s is not proven caught up", m.Name, m.Node))
		default:
			return drainHandover(in, main, m, head), true
		}
	}
	step := DrainStep{Node: main.Node}
	switch {
	case len(replicas) == 0:
		step.Verdict = DrainBlocked
		step.Message = head + ", the only data instance: the MAIN's PodDisruptionBudget holds the drain; " +
			"raise spec.dataInstances so that the hook can hand MAIN over to the new replica, or uncordon the node"
	case len(waiting) == 0:
		step.Verdict = DrainBlocked
		step.Message = fmt.Sprintf("%s, and every replica (%s) runs on a cordoned node: the MAIN's PodDisruptionBudget "+
			"holds the drain; uncordon a node a replica runs on, or drain one node at a time", head, strings.Join(replicas, ", "))
	default:
		step.Verdict = DrainWait
		step.Message = fmt.Sprintf("%s: waiting for a replica on a schedulable node to be Ready and proven caught up "+
			"before the handover (%s)", head, strings.Join(waiting, "; "))
	}
	return step, true
}

// drainHandover hands MAIN over to target through a leader that is up.
func drainHandover(in DrainInput, main, target DrainMember, head string) DrainStep {
	leader, ok := findDrainMember(in.Members, in.Leader)
	if !ok || !leader.Ready {
		return DrainStep{Verdict: DrainWait, Node: main.Node,
			Message: head + ": waiting for a Raft leader that is Ready to hand MAIN over to " + target.Name}
	}
	return DrainStep{
		Verdict: DrainAct,
		Command: Handover{From: main.Name, To: target.Name},
		Node:    main.Node,
		Message: fmt.Sprintf("%s: handing MAIN over to %s on %s, proven caught up; the drain proceeds once the MAIN's PodDisruptionBudget follows",
			head, target.Name, target.Node),
	}
}

// drainLeader makes a Ready leader on a cordoned node yield when another coordinator is Ready on
// a schedulable node (Raft elects among the coordinators it can reach; a yield never picks the
// successor, so a second cordoned coordinator may be elected, and yields in turn). ok is false
// when the leader's node is not cordoned, or when no coordinator could take over: the drain then
// evicts the leader and Raft elects a new one, which the coordinators' budget already allows.
func drainLeader(in DrainInput) (DrainStep, bool) {
	leader, ok := in.cordonedMember(in.Leader)
	if !ok || !leader.Ready {
		return DrainStep{}, false
	}
	var waiting []string
	for _, m := range in.Members {
		if m.Role != topology.RoleCoordinator || m.Name == leader.Name || !in.schedulable(m) {
			continue
		}
		if m.Ready {
			return DrainStep{
				Verdict: DrainAct,
				Command: YieldLeadership{},
				Node:    leader.Node,
				Message: fmt.Sprintf("node %s is cordoned and runs the Raft leader %s (pod %s): YIELD LEADERSHIP, so that a coordinator on a schedulable node leads",
					leader.Node, leader.Name, leader.Pod),
			}, true
		}
		waiting = append(waiting, fmt.Sprintf("%s on %s is not Ready", m.Name, m.Node))
	}
	if len(waiting) == 0 {
		return DrainStep{}, false
	}
	return DrainStep{
		Verdict: DrainWait,
		Node:    leader.Node,
		Message: fmt.Sprintf("node %s is cordoned and runs the Raft leader %s (pod %s): waiting for a coordinator on a schedulable node to be Ready before it yields leadership (%s)",
			leader.Node, leader.Name, leader.Pod, strings.Join(waiting, "; ")),
	}, true
}

// drain is the drain stage, for a pass whose plan has nothing to run: when no cordoned node runs
// the MAIN or the Raft leader (planned on discovery's view, the converged hot path), it reads
// nothing more. Otherwise it reads the leader's table and the catch-up proofs, plans again, and
// unless a dry run runs the step — the handover or YIELD LEADERSHIP —, whose handover
// DrainPrecondition re-checks right before it. After a step it reads the table again, so that
// the MAIN's budget follows the new MAIN in this very pass. A pass that wrote leaves the later
// stages to the next one, which plans on the cluster these writes made.
func (p *pass) drain() flow {
	cordoned := CordonedNodes(p.in.Nodes)
	if len(cordoned) > 0 {
		if p.drainStep(cordoned) == waiting {
			return waiting
		}
	}
	if len(p.out.Execution.Writes) > 0 || p.expired {
		return stop
	}
	return goOn
}

func (p *pass) drainStep(cordoned map[string]bool) flow {
	view := p.out.Discovery.View
	base := DrainMembers(p.d, p.in.PodNodes, p.in.PodReady, cordoned)
	if PlanDrain(ReadDrain(p.d, base, Observe(view.Instances, nil, p.in.Span))).Verdict == DrainNone {
		return goOn
	}
	lv, f, err := p.leaderView(view)
	switch {
	case f == waiting:
		return waiting
	case err != nil:
		p.out.Drain = drainWaits("the leader's table could not be read: " + Explain(err))
		return goOn
	}
	if _, leadership := ReadLeadership(lv.Instances); leadership != LeaderReady {
		p.out.Drain = drainWaits(lv.Leader + " leads but is not ready yet")
		return goOn
	}
	observed := Observe(lv.Instances, nil, p.in.Span)
	if f, _ := p.catchUp(lv, &observed); f == waiting { // without the proofs, the drain waits for them
		return waiting
	}
	read := ReadDrain(p.d, base, observed)
	p.out.Drain = PlanDrain(read)
	if p.out.Drain.Verdict != DrainAct || p.in.DryRun {
		return goOn
	}
	g := func(cmd Command, fresh Fresh) string {
		if h, ok := cmd.(Handover); ok {
			return DrainPrecondition(p.d, read, h, fresh)
		}
		return p.planGuard(cmd, fresh)
	}
	if p.out.Execution, f = p.execute(lv.Coordinator.BoltServer, []Command{p.out.Drain.Command}, g); f == waiting {
		return waiting
	}
	if len(p.out.Execution.Ran) > 0 && !p.expired {
		after, ok, f := p.reread(lv.Coordinator)
		if f == waiting {
			return waiting
		}
		if ok {
			p.out.Latest, p.out.Progress = after, p.progressOn(after)
		}
	}
	return goOn
}

// drainWaits is the step of a drain stage that could not read what it needs: the MAIN or leader
// on a cordoned node waits on the leader.
func drainWaits(why string) DrainStep {
	return DrainStep{Verdict: DrainWait,
		Message: fmt.Sprintf("a node that runs the MAIN or the Raft leader is cordoned: waiting to read the cluster on its leader (%s)", why)}
}
