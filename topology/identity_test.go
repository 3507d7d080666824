package topology

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/internal/apitest"
)

var prodNetwork = Network{
	Cluster: "graph", Namespace: "prod", ClusterDomain: "corp.internal",
	Ports: Ports{Bolt: 7688, Management: 10001, Replication: 20001, Coordinator: 12001},
}

func TestNetworkMembers(t *testing.T) {
	wantCoord := Coordinator{
		Member: Member{
			Ordinal: 2, Name: "coordinator_2", Pod: "graph-coordinator-2",
			Host:             "graph-coordinator-2.graph-coordinator.prod.svc.corp.internal",
			BoltServer:       "graph-coordinator-2.graph-coordinator.prod.svc.corp.internal:7688",
			ManagementServer: "graph-coordinator-2.graph-coordinator.prod.svc.corp.internal:10001",
		},
		CoordinatorServer: "graph-coordinator-2.graph-coordinator.prod.svc.corp.internal:12001",
	}
	if diff := cmp.Diff(wantCoord, prodNetwork.Coordinator(2)); diff != "" {
		t.Errorf("Coordinator(2) (-want +got):\n%s", diff)
	}
	wantData := DataInstance{
		Member: Member{
			Ordinal: 0, Name: "instance_0", Pod: "graph-data-0",
			Host:             "graph-data-0.graph-data.prod.svc.corp.internal",
			BoltServer:       "graph-data-0.graph-data.prod.svc.corp.internal:7688",
			ManagementServer: "graph-data-0.graph-data.prod.svc.corp.internal:10001",
		},
		ReplicationServer: "graph-data-0.graph-data.prod.svc.corp.internal:20001",
	}
	if diff := cmp.Diff(wantData, prodNetwork.DataInstance(0)); diff != "" {
		t.Errorf("DataInstance(0) (-want +got):\n%s", diff)
	}
	if got := wantCoord.ID(); got != 2 {
		t.Errorf("coordinator_2 has Raft id %d", got)
	}
	if wantCoord.UniqueEndpoint() != wantCoord.CoordinatorServer || wantData.UniqueEndpoint() != wantData.ManagementServer {
		t.Errorf("unique endpoints: %q, %q", wantCoord.UniqueEndpoint(), wantData.UniqueEndpoint())
	}
}

func TestMembersOfEitherRole(t *testing.T) {
	d := Declare(prodNetwork, Replicas{Coordinators: 3, DataInstances: 1}, Replicas{Coordinators: 5, DataInstances: 3})
	if diff := cmp.Diff([]string{"coordinator_4", "coordinator_5"}, Names(d.RetiringCoordinators)); diff != "" {
		t.Errorf("Names (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"instance_1", "instance_2"}, Names(d.RetiringDataInstances)); diff != "" {
		t.Errorf("Names (-want +got):\n%s", diff)
	}
	if m, ok := Find(d.DataInstances, "instance_0"); !ok || m.Pod != "graph-data-0" {
		t.Errorf("Find(instance_0) = %+v, %v", m, ok)
	}
	if _, ok := Find(d.Coordinators, "coordinator_4"); ok {
		t.Error("Find found a retiring coordinator among the declared ones")
	}
}

func TestParseNames(t *testing.T) {
	for _, tc := range []struct {
		name   string
		parse  func(string) (int, bool)
		in     string
		want   int
		wantOK bool
	}{
		{"coordinator", ParseCoordinatorName, "coordinator_3", 3, true},
		{"coordinator zero", ParseCoordinatorName, "coordinator_0", 0, true},
		{"coordinator leading zero", ParseCoordinatorName, "coordinator_03", 0, false},
		{"coordinator no id", ParseCoordinatorName, "coordinator_", 0, false},
		{"coordinator negative", ParseCoordinatorName, "coordinator_-1", 0, false},
		{"coordinator plus sign", ParseCoordinatorName, "coordinator_+1", 0, false},
		{"coordinator as instance", ParseCoordinatorName, "instance_1", 0, false},
		{"instance", ParseDataInstanceName, "instance_12", 12, true},
		{"instance suffix", ParseDataInstanceName, "instance_1a", 0, false},
		{"instance as coordinator", ParseDataInstanceName, "coordinator_1", 0, false},
		{"instance beyond int", ParseDataInstanceName, "instance_99999999999999999999999", 0, false},
	} {
		got, ok := tc.parse(tc.in)
		if got != tc.want || ok != tc.wantOK {
			t.Errorf("%s: parse(%q) = %d, %v; want %d, %v", tc.name, tc.in, got, ok, tc.want, tc.wantOK)
		}
	}
	for id := range 12 {
		if got, ok := ParseCoordinatorName(CoordinatorName(id)); !ok || got != id {
			t.Errorf("coordinator name round trip for %d: %d, %v", id, got, ok)
		}
		if got, ok := ParseDataInstanceName(DataInstanceName(id)); !ok || got != id {
			t.Errorf("instance name round trip for %d: %d, %v", id, got, ok)
		}
	}
}

func TestPodOrdinal(t *testing.T) {
	for _, tc := range []struct {
		pod    string
		want   int
		wantOK bool
	}{
		{"graph-data-0", 0, true},
		{"graph-data-127", 127, true},
		{"graph-data-007", 0, false},
		{"graph-data-", 0, false},
		{"graph-data-+1", 0, false},
		{"graph-data-1x", 0, false},
		{"graph-coordinator-1", 0, false},
		{"graph-data-99999999999999999999999", math.MaxInt, true}, // beyond any ceiling, yet an ordinal
	} {
		if got, ok := PodOrdinal("graph-data", tc.pod); got != tc.want || ok != tc.wantOK {
			t.Errorf("PodOrdinal(%q) = %d, %v; want %d, %v", tc.pod, got, ok, tc.want, tc.wantOK)
		}
	}
}

func memberNames(d Declared) [4][]string {
	var out [4][]string
	for _, c := range d.Coordinators {
		out[0] = append(out[0], c.Name)
	}
	for _, c := range d.RetiringCoordinators {
		out[1] = append(out[1], c.Name)
	}
	for _, m := range d.DataInstances {
		out[2] = append(out[2], m.Name)
	}
	for _, m := range d.RetiringDataInstances {
		out[3] = append(out[3], m.Name)
	}
	return out
}

func TestDeclare(t *testing.T) {
	for _, tc := range []struct {
		name           string
		declared, span Replicas
		want           [4][]string // coordinators, retiring coordinators, data, retiring data
	}{
		{"fresh cluster", Replicas{3, 2}, Replicas{0, 0},
			[4][]string{{"coordinator_1", "coordinator_2", "coordinator_3"}, nil, {"instance_0", "instance_1"}, nil}},
		{"growing retires nothing", Replicas{5, 3}, Replicas{3, 2},
			[4][]string{{"coordinator_1", "coordinator_2", "coordinator_3", "coordinator_4", "coordinator_5"}, nil,
				{"instance_0", "instance_1", "instance_2"}, nil}},
		{"shrinking retires the highest ordinals", Replicas{3, 1}, Replicas{5, 3},
			[4][]string{{"coordinator_1", "coordinator_2", "coordinator_3"}, {"coordinator_4", "coordinator_5"},
				{"instance_0"}, {"instance_1", "instance_2"}}},
		{"one role shrinks, the other grows", Replicas{3, 4}, Replicas{5, 2},
			[4][]string{{"coordinator_1", "coordinator_2", "coordinator_3"}, {"coordinator_4", "coordinator_5"},
				{"instance_0", "instance_1", "instance_2", "instance_3"}, nil}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Declare(prodNetwork, tc.declared, tc.span)
			if diff := cmp.Diff(tc.want, memberNames(d)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if d.Network != prodNetwork {
				t.Errorf("Declared.Network = %+v", d.Network)
			}
		})
	}
}

// What a coordinator pod advertises must be what the hook registers: expand the rendered
// template's MEMGRAPH_COORDINATOR_HOSTNAME as the kubelet would, for the pod the StatefulSet
// controller names from its ordinal, and compare with Network.Coordinator(id).Host; the id the
// pod reads (its pod-index label) is that ordinal.
func TestCoordinatorEnvMatchesDeclaredIdentity(t *testing.T) {
	for _, mc := range []*v1alpha1.MemgraphCluster{apitest.MinimalCluster(), apitest.EveryKnob()} {
		sts := render(t, mc, Replicas{Coordinators: 5, DataInstances: 1})[0]
		spec := sts["spec"].(map[string]any)
		start := spec["ordinals"].(map[string]any)["start"].(int64)
		container := spec["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
		env := map[string]map[string]any{}
		for _, e := range container["env"].([]any) {
			env[e.(map[string]any)["name"].(string)] = e.(map[string]any)
		}
		idRef := env[v1alpha1.EnvCoordinatorID]["valueFrom"].(map[string]any)["fieldRef"].(map[string]any)["fieldPath"]
		if idRef != "metadata.labels['apps.kubernetes.io/pod-index']" {
			t.Errorf("%s reads its id from %v", v1alpha1.EnvCoordinatorID, idRef)
		}
		n := admit(t, mc).Network()
		for ordinal := start; ordinal < start+5; ordinal++ {
			pod := sts["metadata"].(map[string]any)["name"].(string) + "-" + strconv.FormatInt(ordinal, 10)
			host := strings.ReplaceAll(env[v1alpha1.EnvCoordinatorHostname]["value"].(string), "$(POD_NAME)", pod)
			declared := n.Coordinator(int(ordinal))
			if host != declared.Host || pod != declared.Pod {
				t.Errorf("pod %s advertises %s; the hook registers coordinator %d as pod %s at %s",
					pod, host, ordinal, declared.Pod, declared.Host)
			}
		}
		if start != FirstCoordinatorID {
			t.Errorf("coordinator ordinals start at %d, want %d", start, FirstCoordinatorID)
		}
	}
}

// A coordinator sets all five HA variables (Memgraph reads them as one group); a data instance
// sets only the management port, or Memgraph would take it for a broken coordinator.
func TestHAEnvironmentGroups(t *testing.T) {
	children := render(t, apitest.MinimalCluster(), Replicas{3, 2})
	ha := []string{v1alpha1.EnvManagementPort, v1alpha1.EnvCoordinatorPort, v1alpha1.EnvCoordinatorID, v1alpha1.EnvNuRaftLogFile, v1alpha1.EnvCoordinatorHostname}
	for i, want := range [][]string{ha, {v1alpha1.EnvManagementPort}} {
		container := children[i]["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
		var got []string
		for _, e := range container["env"].([]any) {
			name := e.(map[string]any)["name"].(string)
			if strings.HasPrefix(name, "MEMGRAPH_") && name != v1alpha1.EnvLicense && name != v1alpha1.EnvOrganization {
				got = append(got, name)
			}
		}
		if diff := cmp.Diff(want, got, cmpSorted); diff != "" {
			t.Errorf("%s HA variables (-want +got):\n%s", childID(children[i]), diff)
		}
	}
}
