package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// printStatus writes what `kubectl memgraph status` shows: the cluster line, every member with
// its role, pod, node, readiness and image, the nodes they run on, each replica's state as the
// MAIN reports it, the conditions, the rollout and the last operations.
// It reads the stored MemgraphCluster and its pods only; lag lives in Memgraph, not in the API.
func printStatus(w io.Writer, mgc *unstructured.Unstructured, pods []corev1.Pod, now time.Time) error {
	var mc v1alpha1.MemgraphCluster
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(mgc.Object, &mc); err != nil {
		return fmt.Errorf("MemgraphCluster %s: %w", mgc.GetName(), err)
	}
	st := mc.Status
	fmt.Fprintf(w, "Cluster:   %s/%s\n", mc.Namespace, mc.Name)
	if neverReported(st) {
		fmt.Fprintf(w, "Status:    none: the hook has not reported on this cluster yet, so no member's role is known.\n"+
			"           Is Metacontroller running, and can it call the hook? kubectl describe mgc %s shows its events\n"+
			"           (docs/troubleshooting.md, \"The hook is never called\").\n", mc.Name)
	}
	fmt.Fprintf(w, "Phase:     %s\n", dash(string(st.Phase)))
	fmt.Fprintf(w, "MAIN:      %s (write through Service %s, read through %s)\n", dash(st.Main), topology.WriteServiceName(mc.Name), topology.ReadServiceName(mc.Name))
	fmt.Fprintf(w, "Leader:    %s\n", dash(st.Leader))
	if st.Members != "" {
		fmt.Fprintf(w, "Members:   %s up\n", st.Members)
	}
	fmt.Fprintf(w, "Version:   %s\n", dash(st.Version))
	if st.TargetVersion != "" && st.TargetVersion != st.Version {
		fmt.Fprintf(w, "Rolling to: %s\n", st.TargetVersion)
	}
	fmt.Fprintln(w, "\nMembers:")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  NAME\tROLE\tPOD\tNODE\tREADY\tIMAGE")
	ms := members(mc, pods)
	for _, m := range ms {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", m.name, m.role, m.pod, dash(m.node), m.ready, dash(m.image))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := printNodes(w, mc, ms); err != nil {
		return err
	}
	if err := printReplicas(w, st, now); err != nil {
		return err
	}
	if neverReported(st) {
		fmt.Fprintln(w, "\nConditions, rollout and operations: none reported")
		return nil
	}
	fmt.Fprintln(w, "\nConditions:")
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  TYPE\tSTATUS\tREASON\tSINCE\tMESSAGE")
	for _, c := range st.Conditions {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", c.Type, c.Status, c.Reason, age(now, c.LastTransitionTime.Time), c.Message)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nRollout:")
	fmt.Fprintf(w, "  coordinators %d/%d ready, data instances %d/%d ready\n",
		st.Pods.Coordinators.Ready, st.Pods.Coordinators.Desired, st.Pods.DataInstances.Ready, st.Pods.DataInstances.Desired)
	for _, c := range st.Conditions {
		if c.Type == string(v1alpha1.ConditionUpdated) {
			fmt.Fprintf(w, "  %s: %s\n", c.Reason, c.Message)
		}
	}
	fmt.Fprintln(w, "\nLast operations:")
	if op := st.LastOperation; op != nil {
		fmt.Fprintf(w, "  last pass that wrote: %s (%s, %s ago)%s\n", op.Writes, op.Result, age(now, op.Time.Time), suffix(op.Message))
	}
	if len(st.Operations) == 0 && st.LastOperation == nil {
		fmt.Fprintln(w, "  none")
	}
	for _, op := range st.Operations {
		fmt.Fprintf(w, "  %s ago  %s  %s%s\n", age(now, op.Time.Time), op.Outcome, op.Command, suffix(op.Message))
	}
	for _, warning := range st.Warnings {
		fmt.Fprintf(w, "\nWarning: %s\n", warning)
	}
	return nil
}

// neverReported is true of a cluster the hook has never written a status for: every status it
// writes carries the conditions.
func neverReported(st v1alpha1.MemgraphClusterStatus) bool {
	return len(st.Conditions) == 0
}

type member struct{ name, role, pod, node, ready, image string }

// members lists the declared members, coordinators first, each with what its pod shows.
func members(mc v1alpha1.MemgraphCluster, pods []corev1.Pod) []member {
	byName := map[string]corev1.Pod{}
	for _, p := range pods {
		byName[p.Name] = p
	}
	d := mc.Defaulted().Spec
	var out []member
	add := func(name, role, pod string) {
		m := member{name: name, role: role, pod: pod, ready: "no pod"}
		if p, ok := byName[pod]; ok {
			m.node, m.ready, m.image = p.Spec.NodeName, podReady(p), podImage(p)
		}
		out = append(out, m)
	}
	for i := range d.Coordinators {
		name := fmt.Sprintf("coordinator_%d", i+1)
		role := "follower"
		switch mc.Status.Leader {
		case "":
			role = "-" // no leader observed: nobody's role is known
		case name:
			role = "leader"
		}
		add(name, role, fmt.Sprintf("%s-%d", topology.CoordinatorSetName(mc.Name), i+1))
	}
	for i := range d.DataInstances {
		name := fmt.Sprintf("instance_%d", i)
		role := "replica"
		switch mc.Status.Main {
		case "":
			role = "-" // no MAIN observed: nobody's role is known
		case name:
			role = "MAIN"
		}
		add(name, role, fmt.Sprintf("%s-%d", topology.DataSetName(mc.Name), i))
	}
	return out
}

func podReady(p corev1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			if c.Status == corev1.ConditionTrue {
				return "true"
			}
			return "false"
		}
	}
	return strings.ToLower(string(p.Status.Phase))
}

func podImage(p corev1.Pod) string {
	for _, c := range p.Spec.Containers {
		if c.Name == topology.ContainerName {
			return c.Image
		}
	}
	if len(p.Spec.Containers) > 0 {
		return p.Spec.Containers[0].Image
	}
	return ""
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func suffix(msg string) string {
	if msg == "" {
		return ""
	}
	return ": " + msg
}

// age is a duration like kubectl's AGE column: 45s, 3m, 2h, 5d.
func age(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t)
	switch {
	case d < 0:
		return "0s"
	case d < 2*time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < 2*time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// printNodes lists the nodes the members' pods run on, what each holds and what its loss alone
// would take: the Raft majority or every copy of the data that is surely up to date, as the
// HighlyAvailable condition judges it (planner.SingleNodeRisks, with the MAIN of the status).
func printNodes(w io.Writer, mc v1alpha1.MemgraphCluster, ms []member) error {
	held := map[string][]string{}
	var nodes []string
	for _, m := range ms {
		if m.node == "" {
			continue
		}
		if held[m.node] == nil {
			nodes = append(nodes, m.node)
		}
		name := m.name
		if m.role == "MAIN" || m.role == "leader" {
			name += " (" + m.role + ")"
		}
		held[m.node] = append(held[m.node], name)
	}
	if len(nodes) == 0 {
		return nil
	}
	slices.Sort(nodes)
	risks := nodeRisks(mc, ms)
	fmt.Fprintln(w, "\nNodes:")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  NODE\tMEMBERS\tITS LOSS TAKES")
	for _, node := range nodes {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", node, strings.Join(held[node], ", "), dash(risks[node]))
	}
	return tw.Flush()
}

// nodeRisks says, by node, what its loss alone takes; nothing when the stored spec does not
// admit (the API server would not have stored it).
func nodeRisks(mc v1alpha1.MemgraphCluster, ms []member) map[string]string {
	c, err := topology.NewCluster(&mc)
	if err != nil {
		return nil
	}
	in := planner.PlacementInput{Declared: c.Declare(c.Replicas()), PodNodes: map[string]string{}, Main: mc.Status.Main}
	for _, m := range ms {
		if m.node != "" {
			in.PodNodes[m.pod] = m.node
		}
	}
	out := map[string]string{}
	for _, r := range planner.SingleNodeRisks(in) {
		var takes []string
		if len(r.Coordinators) > 0 {
			takes = append(takes, fmt.Sprintf("the Raft majority (%d of %d coordinators)", len(r.Coordinators), r.Of))
		}
		if r.Main != "" {
			takes = append(takes, "every copy of the data surely up to date (the MAIN and its Sync and StrictSync replicas)")
		}
		out[r.Node] = strings.Join(takes, "; ")
	}
	return out
}

// printReplicas lists status.replicas: each replica the MAIN's SHOW REPLICAS lists, in Memgraph's
// words, and since when its health has held; then a rebuild the cluster's annotation asks for.
func printReplicas(w io.Writer, st v1alpha1.MemgraphClusterStatus, now time.Time) error {
	if len(st.Replicas) > 0 {
		fmt.Fprintf(w, "\nReplicas (SHOW REPLICAS on MAIN %s):\n", dash(st.Main))
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  NAME\tSYNC MODE\tSTATE\tDATABASE\tSINCE")
		for _, r := range st.Replicas {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", r.Name, dash(r.SyncMode), dash(r.State), dash(r.Database), age(now, r.Since.Time))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if r := st.Rebuild; r != nil {
		fmt.Fprintf(w, "\nRebuild:   %s: %s\n", r.Instance, r.Phase)
	}
	return nil
}
