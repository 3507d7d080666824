package planner

import (
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// The search for the MAIN reads the leader's table through discovery and ends on the MAIN it
// names, which must be a data instance of the cluster and up; every other table is an error that
// says why.
func TestFindMainFindsTheMainTheLeaderNames(t *testing.T) {
	c, err := topology.NewCluster(&v1alpha1.MemgraphCluster{ObjectMeta: metav1.ObjectMeta{Name: "mg", Namespace: "db"},
		Spec: v1alpha1.MemgraphClusterSpec{Coordinators: 3, DataInstances: 2}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		answer  Result
		want    string // the MAIN's name, or
		wantErr string
	}{
		{"the leader names an up MAIN", Result{Rows: rows(coords(3, 1), one(replica(0), mainRow(1)))}, "instance_1", ""},
		{"the MAIN is down", Result{Rows: rows(coords(3, 1), one(replica(0), data(1, memgraph.HealthDown, memgraph.RoleMain)))}, "",
			"the MAIN of cluster mg, instance_1, is down"},
		{"no MAIN", Result{Rows: rows(coords(3, 1), one(replica(0), replica(1)))}, "",
			"cluster mg has no MAIN: the leader coordinator_1 names none"},
		{"no coordinator answers", Result{Err: errors.New("connection refused")}, "",
			"no coordinator of cluster mg named a ready leader"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var record []Result
			for range 5 {
				p := &pass{record: record, d: c.Declare(c.Replicas())}
				found, f, err := p.findMain(c)
				if f == waiting {
					if _, read := p.pending.(Read); !read {
						t.Fatalf("step %T, want a Read", p.pending)
					}
					record = append(record, tc.answer)
					continue
				}
				switch {
				case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
					t.Fatalf("error %v, want one with %q", err, tc.wantErr)
				case tc.wantErr == "" && (err != nil || found.Name != tc.want):
					t.Fatalf("found %q (error %v), want %s", found.Name, err, tc.want)
				}
				return
			}
			t.Fatalf("no MAIN found after %d reads", len(record))
		})
	}
}
