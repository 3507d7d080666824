package topology

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
)

func TestRoleSetReadsPodOrdinalsWithinItsCeiling(t *testing.T) {
	coordinators, data := RoleSets("mg")[0], RoleSets("mg")[1]
	for _, tc := range []struct {
		name      string
		r         RoleSet
		pod       string
		bound     int32
		index     int
		indexed   bool
		ignoredIt bool
	}{
		{"the first coordinator", coordinators, "mg-coordinator-1", 1, 0, true, false},
		{"the last coordinator allowed", coordinators, fmt.Sprintf("mg-coordinator-%d", v1alpha1.MaxCoordinators), v1alpha1.MaxCoordinators, v1alpha1.MaxCoordinators - 1, true, false},
		{"a coordinator beyond the ceiling", coordinators, fmt.Sprintf("mg-coordinator-%d", v1alpha1.MaxCoordinators+1), 0, 0, false, true},
		{"below the first ordinal", coordinators, "mg-coordinator-0", 0, 0, false, false},
		{"another set's pod", coordinators, "mg-data-0", 0, 0, false, false},
		{"a data pod", data, "mg-data-2", 3, 2, true, false},
	} {
		var ignored Warnings
		if got := tc.r.OrdinalBound(tc.pod, &ignored); got != tc.bound {
			t.Errorf("%s: OrdinalBound = %d, want %d", tc.name, got, tc.bound)
		}
		if (len(ignored) > 0) != tc.ignoredIt {
			t.Errorf("%s: warnings %q", tc.name, ignored)
		}
		if index, ok := tc.r.PodIndex(tc.pod); index != tc.index || ok != tc.indexed {
			t.Errorf("%s: PodIndex = %d, %t; want %d, %t", tc.name, index, ok, tc.index, tc.indexed)
		}
	}
}

func TestWarningsRenderSortedAndBounded(t *testing.T) {
	var w Warnings
	for i := v1alpha1.MaxWarnings + 2; i > 0; i-- {
		w.Addf("warning %02d", i)
	}
	got := w.Render()
	want := []string{}
	for i := 1; i < v1alpha1.MaxWarnings; i++ {
		want = append(want, fmt.Sprintf("warning %02d", i))
	}
	want = append(want, "and 3 more ignored objects")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Render (-want +got):\n%s", diff)
	}
	if Warnings(nil).Render() != nil {
		t.Error("no warnings render as none")
	}
}

func TestDeclaredDataPodFindsRetiringInstances(t *testing.T) {
	n := Network{Cluster: "mg", Namespace: "db", ClusterDomain: "cluster.local"}
	d := Declare(n, Replicas{Coordinators: 1, DataInstances: 1}, Replicas{Coordinators: 1, DataInstances: 2})
	for name, want := range map[string]string{"instance_0": "mg-data-0", "instance_1": "mg-data-1", "instance_2": ""} {
		if got, _ := d.DataPod(name); got != want {
			t.Errorf("DataPod(%s) = %q, want %q", name, got, want)
		}
	}
	c, data := d.PodNames()
	if diff := cmp.Diff([]string{"mg-coordinator-1"}, c); diff != "" {
		t.Errorf("coordinator pods (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"mg-data-0"}, data); diff != "" {
		t.Errorf("data pods (-want +got):\n%s", diff)
	}
}
