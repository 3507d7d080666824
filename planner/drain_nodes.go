package planner

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
