package planner

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

func TestExternalAccessCondition(t *testing.T) {
	assigned := []topology.ExternalMember{
		{Name: "coordinator_1", Service: "mg-coordinator-1-external", Address: lbAddr(1)},
		{Name: "instance_0", Service: "mg-data-0-external", Address: lbAddr(10)},
	}
	advertised := View{Leader: "coordinator_1", Instances: one(withBolt(coord(1, memgraph.RoleLeader), lbAddr(1)), withBolt(mainRow(0), lbAddr(10)))}
	view := func(members []topology.ExternalMember, withheld string) topology.Declared {
		d := declared(1, 1, 1, 1)
		d.External = &topology.ExternalAccessView{Type: v1alpha1.ExternalLoadBalancer, Members: members, TemplateWithheld: withheld}
		return d
	}
	for _, tc := range []struct {
		name   string
		d      topology.Declared
		latest View
		want   Condition
	}{
		{"every address advertised", view(assigned, ""), advertised, Condition{metav1.ConditionTrue, v1alpha1.ReasonAddressesAdvertised,
			"routing clients are given every member's external address: coordinator_1 198.51.100.1:7687, instance_0 198.51.100.10:7687"}},
		{"one not advertised yet", view(assigned, ""), View{Leader: "coordinator_1", Instances: one(withBolt(coord(1, memgraph.RoleLeader), lbAddr(1)), mainRow(0))},
			Condition{metav1.ConditionFalse, v1alpha1.ReasonAddressPending, "routing clients are not given these addresses yet: instance_0 " +
				"198.51.100.10:7687 (the coordinators give mg-data-0.mg-data.db.svc.cluster.local:7687)"}},
		{"no table read", view(assigned, ""), View{}, Condition{metav1.ConditionFalse, v1alpha1.ReasonAddressPending,
			"every Service has its address, but no ready leader's SHOW INSTANCES was read in this pass to confirm that routing clients are given them"}},
		{"one waiting for its load balancer", view([]topology.ExternalMember{assigned[0],
			{Name: "instance_0", Service: "mg-data-0-external", Waiting: "Service mg-data-0-external has no load balancer yet"}}, ""), advertised,
			Condition{metav1.ConditionFalse, v1alpha1.ReasonAddressPending, "advertised at the in-cluster name until Kubernetes assigns an " +
				"address: instance_0: Service mg-data-0-external has no load balancer yet"}},
		{"an unusable address outranks a wait", view([]topology.ExternalMember{
			{Name: "coordinator_1", Service: "mg-coordinator-1-external", Waiting: "no node port yet"},
			{Name: "instance_0", Service: "mg-data-0-external", Waiting: "node n1 reports no address", Unusable: true}}, ""), advertised,
			Condition{metav1.ConditionFalse, v1alpha1.ReasonAddressUnusable, "advertised at the in-cluster name instead: instance_0: node n1 reports no address"}},
		{"an ignored template outranks everything", view(assigned, v1alpha1.MsgHostnameInstance), advertised,
			Condition{metav1.ConditionFalse, v1alpha1.ReasonHostnameTemplateInvalid, "spec.externalAccess.hostnameTemplate is ignored, so " +
				"members are advertised at their Services' addresses: " + v1alpha1.MsgHostnameInstance}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ExternalAccessCondition(tc.d, tc.latest)
			if !ok {
				t.Fatal("no condition with spec.externalAccess")
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("condition (-want +got):\n%s", diff)
			}
		})
	}
	if _, ok := ExternalAccessCondition(declared(3, 2, 3, 2), advertised); ok {
		t.Error("a condition without spec.externalAccess")
	}
}
