package planner

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// Placement judges whether one node's loss can take the cluster down, from where the pods run
// (their spec.nodeName). Two things do: losing the coordinators' Raft majority — a node holding at
// least half the declared coordinators leaves fewer than a majority without it — and losing every
// synchronous copy of the data — a node holding the MAIN together with every Sync and StrictSync
// replica (an Async replica may lack the MAIN's last acknowledged writes, so it does not count).
// A member whose pod is not scheduled is on no node.

// PlacementInput is what the risk is judged on.
type PlacementInput struct {
	// Declared are the declared members, the data instances with their replication modes.
	Declared topology.Declared
	// PodNodes is each scheduled pod's node (spec.nodeName), by pod name.
	PodNodes map[string]string
	// Main is the MAIN's name as the pass read it; "" when it read none, and then every declared
	// data instance is judged as the MAIN it may be.
	Main string
}

// NodeRisk is a node whose loss alone takes the cluster down, and what it holds that does.
type NodeRisk struct {
	Node string
	// Coordinators are the declared coordinators on the node, when they are at least half of
	// them; Of is how many are declared.
	Coordinators []string
	Of           int
	// Main is the MAIN on the node when every Sync and StrictSync replica is there too
	// (SyncReplicas, perhaps none); MainKnown is false when the pass read no MAIN and Main is a
	// data instance that would be at risk as MAIN.
	Main         string
	MainKnown    bool
	SyncReplicas []string
	// OnlyDataInstance: Main is the one declared data instance.
	OnlyDataInstance bool
}

// SingleNodeRisks are the nodes whose loss alone takes the cluster down, by node name.
func SingleNodeRisks(in PlacementInput) []NodeRisk {
	byNode := map[string]*NodeRisk{}
	at := func(node string) *NodeRisk {
		if byNode[node] == nil {
			byNode[node] = &NodeRisk{Node: node}
		}
		return byNode[node]
	}
	for node, names := range in.coordinatorsByNode() {
		if of := len(in.Declared.Coordinators); 2*len(names) >= of {
			r := at(node)
			r.Coordinators, r.Of = names, of
		}
	}
	for _, main := range in.mainCandidates() {
		if node, replicas, ok := in.dataRisk(main); ok {
			r := at(node)
			r.Main, r.MainKnown, r.SyncReplicas = main, in.Main != "", replicas
			r.OnlyDataInstance = len(in.Declared.DataInstances) == 1
			break // one instance at risk as MAIN says enough when no MAIN was read
		}
	}
	risks := make([]NodeRisk, 0, len(byNode))
	for _, r := range byNode {
		risks = append(risks, *r)
	}
	slices.SortFunc(risks, func(a, b NodeRisk) int { return strings.Compare(a.Node, b.Node) })
	return risks
}

// coordinatorsByNode are the declared coordinators on each node, by id.
func (in PlacementInput) coordinatorsByNode() map[string][]string {
	out := map[string][]string{}
	for _, c := range in.Declared.Coordinators {
		if node := in.PodNodes[c.Pod]; node != "" {
			out[node] = append(out[node], c.Name)
		}
	}
	return out
}

// mainCandidates are the MAIN the pass read, or, when it read none, every declared data instance.
func (in PlacementInput) mainCandidates() []string {
	if in.Main != "" {
		return []string{in.Main}
	}
	return topology.Names(in.Declared.DataInstances)
}

// dataRisk: main's node holds every declared Sync and StrictSync data instance but main (listed
// in replicas); ok is false when main's pod is not scheduled or a synchronous replica runs
// elsewhere or nowhere.
func (in PlacementInput) dataRisk(main string) (node string, replicas []string, ok bool) {
	pod, declared := in.Declared.DataPod(main)
	if node = in.PodNodes[pod]; !declared || node == "" {
		return "", nil, false
	}
	for _, di := range in.Declared.DataInstances {
		if di.Name == main || di.Mode == v1alpha1.ReplicationAsync {
			continue
		}
		if in.PodNodes[di.Pod] != node {
			return "", nil, false
		}
		replicas = append(replicas, di.Name)
	}
	return node, replicas, true
}

// HighlyAvailable is the HighlyAvailable condition: False (SingleNodeRisk) naming every node
// whose loss alone takes the cluster down and what it holds, True (SpreadAcrossNodes) when there
// is none, Unknown (PodsNotScheduled) while no declared member's pod is on a node.
func HighlyAvailable(in PlacementInput) Condition {
	nodes := in.nodes()
	if len(nodes) == 0 {
		return Condition{Status: metav1.ConditionUnknown, Reason: v1alpha1.ReasonPodsNotScheduled,
			Message: "no pod of the cluster is scheduled on a node"}
	}
	risks := SingleNodeRisks(in)
	if len(risks) == 0 {
		return isTrue(v1alpha1.ReasonSpreadAcrossNodes, "no node holds half the coordinators or more, nor the MAIN with every "+
			"Sync and StrictSync replica: the pods run on %s", describeCount(len(nodes), "node"))
	}
	parts := make([]string, len(risks))
	for i, r := range risks {
		parts[i] = r.String()
	}
	return isFalse(v1alpha1.ReasonSingleNodeRisk, "one node's loss would take the cluster down: %s; "+
		"spread the pods over more nodes (spec.placement)", strings.Join(parts, "; "))
}

// nodes are the nodes the declared members' pods run on, sorted.
func (in PlacementInput) nodes() []string {
	var nodes []string
	for _, pod := range slices.Concat(podsOf(in.Declared.Coordinators), podsOf(in.Declared.DataInstances)) {
		if node := in.PodNodes[pod]; node != "" && !slices.Contains(nodes, node) {
			nodes = append(nodes, node)
		}
	}
	slices.Sort(nodes)
	return nodes
}

func podsOf[M topology.Role](members []M) []string {
	pods := make([]string, len(members))
	for i, m := range members {
		pods[i] = m.Core().Pod
	}
	return pods
}

// String says what the node holds that takes the cluster down with it.
func (r NodeRisk) String() string {
	var holds []string
	if len(r.Coordinators) > 0 {
		holds = append(holds, fmt.Sprintf("%d of %d coordinators (%s), so its loss takes the Raft majority",
			len(r.Coordinators), r.Of, listNames(r.Coordinators)))
	}
	if r.Main != "" {
		holds = append(holds, r.dataHeld())
	}
	return "node " + r.Node + " holds " + strings.Join(holds, ", and ")
}

// dataHeld says which data the node holds: the MAIN and its synchronous replicas.
func (r NodeRisk) dataHeld() string {
	main := "the MAIN " + r.Main
	if !r.MainKnown {
		main = r.Main + " (were it MAIN: no MAIN was read)"
	}
	const lost = ", so its loss takes every copy of the data that is surely up to date"
	switch {
	case r.OnlyDataInstance:
		return main + ", the only data instance" + lost
	case len(r.SyncReplicas) == 0:
		return main + ", whose replicas are all Async" + lost
	}
	return fmt.Sprintf("%s with every Sync and StrictSync replica (%s)%s", main, listNames(r.SyncReplicas), lost)
}
