//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j/log"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// A routing client outside the Kubernetes cluster: with spec.externalAccess of type
// LoadBalancer, once each member's Service reports its load balancer, the real neo4j driver
// connects with neo4j:// to one coordinator's external address, writes through the routing
// table to the MAIN and reads from the replica, and after a switchover writes to the new MAIN.
// Loopback addresses stand for the load balancers: the test writes each into its Service's
// status.loadBalancer.ingress, as a cloud's controller would, and forwards it to the member.
func TestExternalAccessRoutingDriver(t *testing.T) {
	s := startScenario(t, "external-access")
	const name = "ext"
	s.create(name, "externalAccess:\n  type: LoadBalancer\n")
	s.waitConverged(name, convergeTimeout)
	n := s.network(name)
	inCluster := map[string]string{} // member → in-cluster bolt_server
	pods := map[string]string{}      // member → pod
	for id := 1; id <= 3; id++ {
		c := n.Coordinator(id)
		inCluster[c.Name], pods[c.Name] = c.BoltServer, c.Pod
	}
	for i := range 2 {
		d := n.DataInstance(i)
		inCluster[d.Name], pods[d.Name] = d.BoltServer, d.Pod
	}
	if st, reason, msg := conditionStatus(s.getCluster(name), string(v1alpha1.ConditionExternalAccess)); st != "False" ||
		reason != string(v1alpha1.ReasonAddressPending) {
		t.Errorf("before any load balancer: ExternalAccess %s/%s: %s", st, reason, msg)
	}
	lbs := openLoadBalancers(t, s.world, inCluster)
	before := routingTable(t, "neo4j://"+lbs["coordinator_1"])
	t.Logf("routing table without external access: %s", before)
	for member, addr := range inCluster {
		if !strings.Contains(before, addr) {
			t.Errorf("before the load balancers, the table does not name %s's in-cluster %s", member, addr)
		}
	}

	for member, addr := range lbs {
		host, _, _ := net.SplitHostPort(addr)
		s.setLoadBalancer(topology.ExternalServiceName(pods[member]), host)
	}
	s.waitStatus(name, "ExternalAccess did not become True with every load balancer's address", convergeTimeout,
		func(u *unstructured.Unstructured) error {
			if st, reason, msg := conditionStatus(u, string(v1alpha1.ConditionExternalAccess)); st != "True" {
				return fmt.Errorf("ExternalAccess %s/%s: %s", st, reason, msg)
			}
			return nil
		})
	if diff := cmp.Diff(lbs, externalStatus(s.getCluster(name))); diff != "" {
		t.Errorf("status.externalAccess (-want +got):\n%s", diff)
	}
	s.assertNoChurn(2) // the API server's node ports and the load balancers' status are not fought over

	main := s.currentMain()
	replica := map[string]string{"instance_0": "instance_1", "instance_1": "instance_0"}[main]
	writer, reader, after := s.writeAndReadThrough(lbs["coordinator_2"], "outside")
	t.Logf("routing table with external access: %s", after)
	if writer != hostOf(n, main) || reader != hostOf(n, replica) {
		t.Errorf("the write went to %q, the read to %q; want the MAIN %s and the replica %s", writer, reader, main, replica)
	}
	for member, addr := range lbs {
		if !strings.Contains(after, addr) || strings.Contains(after, inCluster[member]) {
			t.Errorf("the table does not give %s's external %s alone: %s", member, addr, after)
		}
	}

	s.patchSpec(name, fmt.Sprintf(`{"preferredMain": %q}`, replica))
	s.waitStatus(name, "the switchover did not finish", convergeTimeout, func(u *unstructured.Unstructured) error {
		if m := s.currentMain(); m != replica {
			return fmt.Errorf("MAIN is %q", m)
		}
		if st, reason, msg := conditionStatus(u, "Converged"); st != "True" {
			return fmt.Errorf("Converged=%q %s: %s", st, reason, msg)
		}
		return nil
	})
	writer, reader, switched := s.writeAndReadThrough(lbs["coordinator_3"], "after-switchover")
	t.Logf("routing table after the switchover: %s", switched)
	if writer != hostOf(n, replica) || reader != hostOf(n, main) {
		t.Errorf("after the switchover the write went to %q, the read to %q; want the new MAIN %s and %s", writer, reader, replica, main)
	}
	s.assertNoMisuse()
}

func hostOf(n topology.Network, member string) string {
	ord, _ := topology.ParseDataInstanceName(member)
	return n.DataInstance(ord).Host
}

// setLoadBalancer writes ip into Service svc's status.loadBalancer.ingress, as a cloud's load
// balancer controller would.
func (s *scenario) setLoadBalancer(svc, ip string) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	patch := fmt.Sprintf(`{"status":{"loadBalancer":{"ingress":[{"ip":%q}]}}}`, ip)
	if _, err := testEnv.Client.CoreV1().Services(s.ns).Patch(ctx, svc, types.MergePatchType, []byte(patch),
		metav1.PatchOptions{}, "status"); err != nil {
		s.t.Fatalf("status of Service %s: %v", svc, err)
	}
}

// externalStatus is status.externalAccess.members as name → address.
func externalStatus(u *unstructured.Unstructured) map[string]string {
	members, _, _ := unstructured.NestedSlice(u.Object, "status", "externalAccess", "members")
	out := map[string]string{}
	for _, m := range members {
		m := m.(map[string]any)
		addr, _ := m["address"].(string)
		out[m["name"].(string)] = addr
	}
	return out
}

// openLoadBalancers gives each member a "load balancer": a listener on port 7687 of a loopback
// address of its own (127.a.b.<n>, n in the members' order, a and b random so that concurrent
// runs do not meet), which forwards every connection to wherever the simulator serves the
// member's in-cluster bolt_server.
func openLoadBalancers(t *testing.T, world *sim.World, inCluster map[string]string) map[string]string {
	t.Helper()
	for range 5 {
		prefix := fmt.Sprintf("127.%d.%d.", 1+rand.IntN(254), 1+rand.IntN(254))
		out, lns, i := map[string]string{}, []net.Listener{}, 0
		for _, member := range slices.Sorted(maps.Keys(inCluster)) {
			target := inCluster[member]
			i++
			ln, err := net.Listen("tcp", fmt.Sprintf("%s%d:7687", prefix, i))
			if err != nil {
				break
			}
			lns = append(lns, ln)
			out[member] = ln.Addr().String()
			go forwardTo(ln, world, target)
		}
		if len(out) == len(inCluster) {
			t.Cleanup(func() {
				for _, ln := range lns {
					ln.Close()
				}
			})
			return out
		}
		for _, ln := range lns {
			ln.Close()
		}
	}
	t.Fatal("no free loopback addresses on port 7687 for the load balancers")
	return nil
}

func forwardTo(ln net.Listener, world *sim.World, target string) {
	for {
		client, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer client.Close()
			server, err := net.Dial("tcp", world.Resolve(target))
			if err != nil {
				return
			}
			defer server.Close()
			done := make(chan struct{}, 2)
			go func() { _, _ = io.Copy(server, client); done <- struct{}{} }()
			go func() { _, _ = io.Copy(client, server); done <- struct{}{} }()
			<-done
		}()
	}
}

// routingTable is the routing table a neo4j:// driver gets from url, whether or not it can then
// reach the members it names.
func routingTable(t *testing.T, url string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	drv, err := neo4j.NewDriverWithContext(url, neo4j.NoAuth())
	if err != nil {
		t.Fatal(err)
	}
	defer drv.Close(ctx)
	rl := &routeLog{}
	_, _ = neo4j.ExecuteQuery(ctx, drv, "RETURN 1", nil, neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithBoltLogger(rl))
	if len(rl.tables) == 0 {
		t.Fatalf("the driver at %s received no routing table", url)
	}
	return rl.tables[0]
}

// writeAndReadThrough writes and then reads one node over a neo4j:// driver that starts at
// coordinator address router, and returns the in-cluster hosts the simulator served the write
// and the read on, and the routing table the driver received.
func (s *scenario) writeAndReadThrough(router, tag string) (writer, reader, table string) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	drv, err := neo4j.NewDriverWithContext("neo4j://"+router, neo4j.NoAuth())
	if err != nil {
		s.t.Fatal(err)
	}
	defer drv.Close(ctx)
	rl := &routeLog{}
	write, read := "CREATE (:Probe {tag: '"+tag+"'})", "MATCH (n:Probe {tag: '"+tag+"'}) RETURN count(n)"
	if _, err := neo4j.ExecuteQuery(ctx, drv, write, nil, neo4j.EagerResultTransformer,
		neo4j.ExecuteQueryWithWritersRouting(), neo4j.ExecuteQueryWithBoltLogger(rl)); err != nil {
		s.t.Fatalf("write through the routing table from %s: %v", router, err)
	}
	if _, err := neo4j.ExecuteQuery(ctx, drv, read, nil, neo4j.EagerResultTransformer,
		neo4j.ExecuteQueryWithReadersRouting(), neo4j.ExecuteQueryWithBoltLogger(rl)); err != nil {
		s.t.Fatalf("read through the routing table from %s: %v", router, err)
	}
	for _, q := range s.world.Queries() {
		switch q.Text {
		case write:
			writer = q.Host
		case read:
			reader = q.Host
		}
	}
	if len(rl.tables) == 0 {
		s.t.Fatal("the driver received no routing table")
	}
	return writer, reader, rl.tables[0]
}

// routeLog keeps the routing tables a driver received, as its Bolt log shows them.
type routeLog struct {
	mu     sync.Mutex
	tables []string
}

var _ log.BoltLogger = (*routeLog)(nil)

func (l *routeLog) LogClientMessage(string, string, ...any) {}
func (l *routeLog) LogServerMessage(_ string, msg string, args ...any) {
	if line := fmt.Sprintf(msg, args...); strings.Contains(line, `"routing_table"`) {
		l.mu.Lock()
		l.tables = append(l.tables, line)
		l.mu.Unlock()
	}
}
