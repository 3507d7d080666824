package planner

import (
	"strconv"
	"strings"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// HealthInput is what the member health is read from; every field is an observation.
type HealthInput struct {
	Declared topology.Declared
	// Instances is the latest SHOW INSTANCES a ready leader answered (ReadLeadership is
	// LeaderReady); nil when none was read, and then a member counts as up when its pod is Ready.
	Instances []memgraph.Instance
	// PodReady holds every pod of the cluster by name: whether its Ready condition is True. A pod
	// missing from it does not exist.
	PodReady map[string]bool
	// Problems are the pods' problems (topology.PodProblems).
	Problems []topology.PodProblem
}

// MemberHealth is how many declared members are up, and which are down and why.
type MemberHealth struct {
	Up, Declared int
	// Down lists the declared members that are down: coordinators by id, then data instances by
	// ordinal.
	Down []DownMember
}

// DownMember is a declared member that is down and the first reason found, in this order: its
// pod's problems, no pod, its pod not Ready, not registered, its health in SHOW INSTANCES.
type DownMember struct {
	Name string // coordinator_<id> or instance_<ordinal>
	Why  string
}

// ReadMemberHealth tells, for each declared member, whether it is up: its pod is Ready and, when
// a ready leader's table was read, the member is registered there with health up.
func ReadMemberHealth(in HealthInput) MemberHealth {
	rows := map[string]memgraph.Instance{}
	for _, r := range in.Instances {
		rows[r.Name] = r
	}
	var h MemberHealth
	members := append(memberCores(in.Declared.Coordinators), memberCores(in.Declared.DataInstances)...)
	for _, m := range members {
		h.Declared++
		if why := in.whyDown(m, rows); why != "" {
			h.Down = append(h.Down, DownMember{Name: m.Name, Why: why})
			continue
		}
		h.Up++
	}
	return h
}

func memberCores[M topology.Role](members []M) []topology.Member {
	cores := make([]topology.Member, 0, len(members))
	for _, m := range members {
		cores = append(cores, m.Core())
	}
	return cores
}

// whyDown says why m is down; "" when it is up.
func (in HealthInput) whyDown(m topology.Member, rows map[string]memgraph.Instance) string {
	var problems []string
	for _, p := range in.Problems {
		if p.Pod == m.Pod {
			problems = append(problems, p.String())
		}
	}
	ready, exists := in.PodReady[m.Pod]
	row, listed := rows[m.Name]
	switch {
	case len(problems) > 0:
		return strings.Join(problems, "; ")
	case !exists:
		return "pod " + m.Pod + " does not exist"
	case !ready:
		return "pod " + m.Pod + " is not Ready"
	case in.Instances == nil:
		return ""
	case (!listed || !row.Registered()) && rebuildHolds(in.Declared, m.Name):
		return "held unregistered for a rebuild (annotation " + topology.AnnotationRebuild + ")"
	case !listed || !row.Registered():
		return "not registered with the coordinators"
	case row.Health != memgraph.HealthUp:
		return "health " + row.Health + " in the leader's SHOW INSTANCES"
	}
	return ""
}

// Members is status.members: "<up>/<declared>".
func (h MemberHealth) Members() string {
	return strconv.Itoa(h.Up) + "/" + strconv.Itoa(h.Declared)
}

// Degraded is the Degraded condition: True naming the members that are down and why, False when
// every declared member is up.
func (h MemberHealth) Degraded() Condition {
	if len(h.Down) == 0 {
		return isFalse(v1alpha1.ReasonAllMembersUp, "all %d declared members are up", h.Declared)
	}
	down := make([]string, len(h.Down))
	for i, d := range h.Down {
		down[i] = d.Name + " (" + d.Why + ")"
	}
	return isTrue(v1alpha1.ReasonMembersDown, "%d of %d declared members are down: %s", len(h.Down), h.Declared, listNames(down))
}

// DegradedIn is Degraded for a cluster in phase: while it hibernates (Hibernating, Hibernated)
// no member is meant to run, so none counts as down (False, reason Hibernated); otherwise Degraded.
func (h MemberHealth) DegradedIn(phase v1alpha1.Phase) Condition {
	if Hibernating(phase) {
		return isFalse(v1alpha1.ReasonHibernated, "spec.hibernate is set: no member is meant to run (%d of %d up)", h.Up, h.Declared)
	}
	return h.Degraded()
}

// Hibernating reports a phase in which the cluster's pods are stopped on purpose.
func Hibernating(phase v1alpha1.Phase) bool {
	return phase == v1alpha1.PhaseHibernating || phase == v1alpha1.PhaseHibernated
}

// ServesWrites is the Ready condition on a SHOW INSTANCES answer: True when a ready leader
// answered and names a MAIN that is up, whose pod is Ready; replicas, followers and pods being
// added do not count. False with NoCoordinatorLeader when no ready leader answered,
// NoMainElected when no data instance is MAIN, MainDown when the MAIN's pod is not Ready or the
// leader reports it down. podReady is HealthInput's.
func ServesWrites(d topology.Declared, instances []memgraph.Instance, podReady map[string]bool) Condition {
	leader, leadership := ReadLeadership(instances)
	switch leadership {
	case NoLeader:
		return isFalse(v1alpha1.ReasonNoCoordinatorLeader, "no coordinator that answered names a leader")
	case LeaderNotReady:
		return isFalse(v1alpha1.ReasonNoCoordinatorLeader, "%s leads but has not finished reconciling the cluster", leader)
	}
	mainInst, ok := findMain(instances)
	if !ok {
		return isFalse(v1alpha1.ReasonNoMainElected, "%s leads, but no data instance is MAIN", leader)
	}
	if mainInst.Health != memgraph.HealthUp {
		return isFalse(v1alpha1.ReasonMainDown, "%s is MAIN but %s reports its health %s: writes fail until it is back or a failover elects another MAIN",
			mainInst.Name, leader, mainInst.Health)
	}
	if pod, known := mainPod(d, mainInst.Name); known && !podReady[pod] {
		return isFalse(v1alpha1.ReasonMainDown, "%s is MAIN but its pod %s is not Ready: writes fail until it is back or a failover elects another MAIN",
			mainInst.Name, pod)
	}
	return isTrue(v1alpha1.ReasonMainElected, "%s is MAIN and up; %s leads", mainInst.Name, leader)
}

// findMain returns the data instance the table names MAIN.
func findMain(instances []memgraph.Instance) (memgraph.Instance, bool) {
	for _, r := range instances {
		if !r.IsCoordinator() && r.Role == memgraph.RoleMain {
			return r, true
		}
	}
	return memgraph.Instance{}, false
}

// mainPod is the pod of the declared or retiring data instance called name.
func mainPod(d topology.Declared, name string) (string, bool) {
	m, ok := topology.Find(append(append([]topology.DataInstance(nil), d.DataInstances...), d.RetiringDataInstances...), name)
	return m.Pod, ok
}

// SecretMissing is the condition that names the Secrets the spec names but that do not exist
// (topology.MissingSecrets), with reason SecretMissing; false when none is missing.
func SecretMissing(missing []topology.MissingSecret) (Condition, bool) {
	if len(missing) == 0 {
		return Condition{}, false
	}
	return isFalse(v1alpha1.ReasonSecretMissing, "%s", topology.MissingSecretsMessage(missing)), true
}
