package planner

import "github.com/memgraph-hooks/memgraph-hooks/topology"

// Node is what the drain planner reads of a Kubernetes Node: its name, spec.unschedulable and
// the keys of spec.taints. Nothing else of a Node matters to the hook.
type Node struct {
	Name          string
	Unschedulable bool
	TaintKeys     []string
}

// TaintUnschedulable is the well-known taint the node lifecycle controller puts on a node whose
// spec.unschedulable is set, and that some tools and cloud providers set instead of it.
const TaintUnschedulable = "node.kubernetes.io/unschedulable"

// NodeCordoned reports whether n is cordoned — about to be drained, or being drained: it is
// unschedulable or carries TaintUnschedulable (with any effect).
func NodeCordoned(n Node) bool {
	if n.Unschedulable {
		return true
	}
	for _, key := range n.TaintKeys {
		if key == TaintUnschedulable {
			return true
		}
	}
	return false
}

// CordonedNodes is the set of the names of the cordoned nodes among nodes.
func CordonedNodes(nodes []Node) map[string]bool {
	out := map[string]bool{}
	for _, n := range nodes {
		if NodeCordoned(n) {
			out[n.Name] = true
		}
	}
	return out
}

// DrainMembers is the drain planner's input from the pods: every declared member with its pod's
// node (podNodes: pod → spec.nodeName) and readiness, and the cordoned nodes. The MAIN, the
// leader and the caught-up replicas come from a view (ReadDrain).
func DrainMembers(d topology.Declared, podNodes map[string]string, ready, cordoned map[string]bool) DrainInput {
	in := DrainInput{Cordoned: cordoned}
	add := func(name, role, pod string) {
		in.Members = append(in.Members, DrainMember{Name: name, Role: role, Pod: pod, Node: podNodes[pod], Ready: ready[pod]})
	}
	for _, c := range d.Coordinators {
		add(c.Name, topology.RoleCoordinator, c.Pod)
	}
	for _, di := range d.DataInstances {
		add(di.Name, topology.RoleData, di.Pod)
	}
	return in
}

// PreferredOffCordon is spec.preferredMain unless its pod runs on a cordoned node: a switchover
// to it would undo the drain's handover, and the drain stage would hand MAIN over again, back
// and forth until the node is uncordoned.
func PreferredOffCordon(d topology.Declared, podNodes map[string]string, cordoned map[string]bool) string {
	if pod, ok := d.DataPod(d.PreferredMain); ok && cordoned[podNodes[pod]] {
		return ""
	}
	return d.PreferredMain
}
