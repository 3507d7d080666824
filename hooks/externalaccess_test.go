package hooks_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// boltServers is each member's bolt_server as the leader reports it.
func (h *harness) boltServers() map[string]string {
	h.t.Helper()
	out := map[string]string{}
	for _, r := range h.showInstances() {
		out[r.Name] = r.BoltServer
	}
	return out
}

// writeQueries are the queries other than reads the simulator received since the last ResetLog.
func (h *harness) writeQueries() []string {
	var out []string
	for _, q := range h.world.Queries() {
		if !strings.HasPrefix(q.Text, "SHOW ") {
			out = append(out, q.Text)
		}
	}
	return out
}

// externalStatus is status.externalAccess.members as name → address, or → "waiting: …".
func (h *harness) externalStatus() map[string]string {
	ext, _ := h.lastResp.Status["externalAccess"].(map[string]any)
	out := map[string]string{}
	members, _ := ext["members"].([]any)
	for _, m := range members {
		m := m.(map[string]any)
		if addr, _ := m["address"].(string); addr != "" {
			out[m["name"].(string)] = addr
		} else {
			out[m["name"].(string)] = "waiting: " + m["waiting"].(string)
		}
	}
	return out
}

// inCluster is every member's in-cluster bolt_server, edited by the given name → address pairs.
func (h *harness) inCluster(edits ...string) map[string]string {
	n := h.network()
	out := map[string]string{}
	for id := 1; id <= 3; id++ {
		out[topology.CoordinatorName(id)] = n.Coordinator(id).BoltServer
	}
	for i := 0; i < 2; i++ {
		out[topology.DataInstanceName(i)] = n.DataInstance(i).BoltServer
	}
	for i := 0; i+1 < len(edits); i += 2 {
		out[edits[i]] = edits[i+1]
	}
	return out
}

func externalServiceOf(pod string) string { return topology.ExternalServiceName(pod) }

// Load balancers' addresses appear, change and go; external access is turned off: each time the
// coordinators' bolt_servers follow in place (UPDATE CONFIG alone, never an UNREGISTER), the
// status names every address or what it waits for, and the hook keeps reaching every member by
// its in-cluster name (the simulator resolves nothing else), through a switchover too.
func TestExternalAddressesFollowTheLoadBalancers(t *testing.T) {
	h := newHarness(t, 3, 2)
	h.spec["externalAccess"] = map[string]any{"type": "LoadBalancer"}
	h.bootstrap()
	h.assertConverged()
	n := h.network()
	var services []string
	for _, c := range h.lastResp.Children {
		if name := c["metadata"].(map[string]any)["name"].(string); strings.HasSuffix(name, "-external") {
			services = append(services, name)
		}
	}
	want := []string{"memgraph-coordinator-1-external", "memgraph-coordinator-2-external", "memgraph-coordinator-3-external",
		"memgraph-data-0-external", "memgraph-data-1-external"}
	if diff := cmp.Diff(want, services); diff != "" {
		t.Fatalf("external Services (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(h.inCluster(), h.boltServers()); diff != "" {
		t.Errorf("before any load balancer, bolt_servers (-want +got):\n%s", diff)
	}
	if st, reason, msg := h.condition(v1alpha1.ConditionExternalAccess); st != "False" || reason != v1alpha1.ReasonAddressPending ||
		!strings.Contains(msg, "instance_0: Service memgraph-data-0-external has no load balancer yet") {
		t.Errorf("ExternalAccess %s/%s: %s", st, reason, msg)
	}

	t.Log("the load balancers get their addresses")
	lbs := map[string]string{"coordinator_1": "198.51.100.1:7687", "coordinator_2": "198.51.100.2:7687",
		"coordinator_3": "lb-3.example.com:7687", "instance_0": "198.51.100.10:7687", "instance_1": "198.51.100.11:7687"}
	h.ingress = map[string][]any{
		externalServiceOf(n.Coordinator(1).Pod):  {map[string]any{"ip": "198.51.100.1"}},
		externalServiceOf(n.Coordinator(2).Pod):  {map[string]any{"ip": "2001:db8::2"}, map[string]any{"ip": "198.51.100.2"}},
		externalServiceOf(n.Coordinator(3).Pod):  {map[string]any{"hostname": "lb-3.example.com"}},
		externalServiceOf(n.DataInstance(0).Pod): {map[string]any{"ip": "198.51.100.10"}},
		externalServiceOf(n.DataInstance(1).Pod): {map[string]any{"ip": "198.51.100.11"}},
	}
	h.world.ResetLog()
	h.sync()
	h.assertConverged()
	var updates []string
	for _, name := range []string{"coordinator_1", "coordinator_2", "coordinator_3"} {
		id, _ := topology.ParseCoordinatorName(name)
		updates = append(updates, memgraph.UpdateCoordinatorConfigQuery(id, lbs[name]))
	}
	updates = append(updates, memgraph.UpdateInstanceConfigQuery("instance_0", lbs["instance_0"]),
		memgraph.UpdateInstanceConfigQuery("instance_1", lbs["instance_1"]))
	if diff := cmp.Diff(updates, h.writeQueries()); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(lbs, h.boltServers()); diff != "" {
		t.Errorf("bolt_servers (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(lbs, h.externalStatus()); diff != "" {
		t.Errorf("status.externalAccess (-want +got):\n%s", diff)
	}
	if st, reason, msg := h.condition(v1alpha1.ConditionExternalAccess); st != "True" || reason != v1alpha1.ReasonAddressesAdvertised {
		t.Errorf("ExternalAccess %s/%s: %s", st, reason, msg)
	}
	h.world.ResetLog()
	h.sync()
	assertOnlyReads(t, h.world.Queries())

	t.Log("a switchover reads the MAIN's SHOW REPLICAS at its in-cluster name")
	h.spec["preferredMain"] = "instance_1"
	h.sync()
	h.sync()
	h.assertConverged()
	if diff := cmp.Diff([]string{"instance_1"}, h.mains()); diff != "" {
		t.Errorf("MAINs after the switchover (-want +got):\n%s", diff)
	}

	t.Log("one load balancer changes its address, another loses it")
	h.ingress[externalServiceOf(n.DataInstance(1).Pod)] = []any{map[string]any{"ip": "198.51.100.21"}}
	h.ingress[externalServiceOf(n.Coordinator(2).Pod)] = []any{}
	h.world.ResetLog()
	h.sync()
	want2 := []string{memgraph.UpdateCoordinatorConfigQuery(2, n.Coordinator(2).BoltServer),
		memgraph.UpdateInstanceConfigQuery("instance_1", "198.51.100.21:7687")}
	if diff := cmp.Diff(want2, h.writeQueries()); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
	lbs["instance_1"], lbs["coordinator_2"] = "198.51.100.21:7687", n.Coordinator(2).BoltServer
	if diff := cmp.Diff(lbs, h.boltServers()); diff != "" {
		t.Errorf("bolt_servers (-want +got):\n%s", diff)
	}
	if st, reason, msg := h.condition(v1alpha1.ConditionExternalAccess); st != "False" || reason != v1alpha1.ReasonAddressPending ||
		!strings.Contains(msg, "coordinator_2: Service memgraph-coordinator-2-external has no load balancer yet") {
		t.Errorf("ExternalAccess %s/%s: %s", st, reason, msg)
	}

	t.Log("external access is turned off: the in-cluster names come back, the Services go")
	delete(h.spec, "externalAccess")
	h.world.ResetLog()
	h.sync()
	h.assertConverged()
	if diff := cmp.Diff(h.inCluster(), h.boltServers()); diff != "" {
		t.Errorf("bolt_servers (-want +got):\n%s", diff)
	}
	for _, q := range h.writeQueries() {
		if !strings.HasPrefix(q, "UPDATE CONFIG") {
			t.Errorf("turning external access off sent %q", q)
		}
	}
	for _, c := range h.lastResp.Children {
		if name := c["metadata"].(map[string]any)["name"].(string); strings.HasSuffix(name, "-external") {
			t.Errorf("child %s returned without spec.externalAccess", name)
		}
	}
	if st, _, _ := h.condition(v1alpha1.ConditionExternalAccess); st != "" {
		t.Errorf("ExternalAccess condition %s without spec.externalAccess", st)
	}
	if _, ok := h.lastResp.Status["externalAccess"]; ok {
		t.Error("status.externalAccess without spec.externalAccess")
	}
	h.assertNoMisuse()
}

// With NodePort, a member's address is the node that runs its pod, on its Service's node port;
// a node without any usable address is a condition naming it, the member advertised in-cluster.
func TestExternalAddressesOnNodePorts(t *testing.T) {
	h := newHarness(t, 3, 2)
	h.spec["externalAccess"] = map[string]any{"type": "NodePort"}
	n := h.network()
	h.podNodes = map[string]string{}
	h.nodes = map[string]any{}
	h.nodePorts = map[string]int64{}
	for i, pod := range []string{n.Coordinator(1).Pod, n.Coordinator(2).Pod, n.Coordinator(3).Pod, n.DataInstance(0).Pod, n.DataInstance(1).Pod} {
		node := fmt.Sprintf("node-%d", i%3)
		h.podNodes[pod] = node
		h.nodePorts[externalServiceOf(pod)] = int64(31000 + i)
	}
	node := func(name string, addresses ...string) map[string]any {
		var list []any
		for i := 0; i+1 < len(addresses); i += 2 {
			list = append(list, map[string]any{"type": addresses[i], "address": addresses[i+1]})
		}
		return map[string]any{"apiVersion": "v1", "kind": "Node", "metadata": map[string]any{"name": name},
			"status": map[string]any{"addresses": list}}
	}
	h.nodes["node-0"] = node("node-0", "InternalIP", "10.0.0.10", "ExternalIP", "203.0.113.10")
	h.nodes["node-1"] = node("node-1", "InternalIP", "10.0.0.11", "Hostname", "node-1")
	h.nodes["node-2"] = node("node-2", "InternalIP", "fd00::12")
	h.nodes["unrelated"] = node("unrelated", "ExternalIP", "203.0.113.99")
	h.bootstrap()
	h.sync()
	want := h.inCluster("coordinator_1", "203.0.113.10:31000", "coordinator_2", "10.0.0.11:31001", "instance_0", "203.0.113.10:31003",
		"instance_1", "10.0.0.11:31004")
	if diff := cmp.Diff(want, h.boltServers()); diff != "" {
		t.Errorf("bolt_servers (-want +got):\n%s", diff)
	}
	if st, reason, msg := h.condition(v1alpha1.ConditionExternalAccess); st != "False" || reason != v1alpha1.ReasonAddressUnusable ||
		!strings.Contains(msg, "coordinator_3: node node-2 (running memgraph-coordinator-3) reports no address Memgraph can advertise") {
		t.Errorf("ExternalAccess %s/%s: %s", st, reason, msg)
	}
	h.assertConverged()

	t.Log("the node gets an address; the pod moves to another node")
	h.nodes["node-2"] = node("node-2", "InternalIP", "10.0.0.12")
	h.podNodes[n.DataInstance(1).Pod] = "node-0"
	h.sync()
	want["coordinator_3"], want["instance_1"] = "10.0.0.12:31002", "203.0.113.10:31004"
	if diff := cmp.Diff(want, h.boltServers()); diff != "" {
		t.Errorf("bolt_servers (-want +got):\n%s", diff)
	}
	if st, reason, msg := h.condition(v1alpha1.ConditionExternalAccess); st != "True" {
		t.Errorf("ExternalAccess %s/%s: %s", st, reason, msg)
	}
	h.assertNoMisuse()
}

// A hostnameTemplate without {instance}, stored under a CRD without its rule, is ignored and
// said so: the Services carry no external-dns hostname, and members are advertised at their
// load balancers' addresses.
func TestHostnameTemplateWithoutInstanceIsAConditionNotAnOutage(t *testing.T) {
	h := newHarness(t, 3, 2)
	h.spec["externalAccess"] = map[string]any{"type": "LoadBalancer", "hostnameTemplate": "graph.example.com"}
	n := h.network()
	h.ingress = map[string][]any{}
	for _, pod := range []string{n.Coordinator(1).Pod, n.Coordinator(2).Pod, n.Coordinator(3).Pod, n.DataInstance(0).Pod, n.DataInstance(1).Pod} {
		h.ingress[externalServiceOf(pod)] = []any{map[string]any{"ip": "198.51.100.7"}}
	}
	h.bootstrap()
	h.sync()
	h.assertConverged()
	if st, reason, msg := h.condition(v1alpha1.ConditionExternalAccess); st != "False" || reason != v1alpha1.ReasonHostnameTemplateInvalid ||
		!strings.Contains(msg, "must contain {instance}") {
		t.Errorf("ExternalAccess %s/%s: %s", st, reason, msg)
	}
	for _, c := range h.lastResp.Children {
		meta := c["metadata"].(map[string]any)
		if annotations, _ := meta["annotations"].(map[string]any); annotations[topology.AnnotationExternalDNSHostname] != nil {
			t.Errorf("Service %s carries the ignored template's hostname %v", meta["name"], annotations[topology.AnnotationExternalDNSHostname])
		}
	}
	for name, addr := range h.boltServers() {
		if addr != "198.51.100.7:7687" {
			t.Errorf("%s advertised at %q, want its load balancer's 198.51.100.7:7687", name, addr)
		}
	}
	h.assertNoMisuse()
}
