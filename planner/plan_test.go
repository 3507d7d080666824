package planner

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// planCase is one named fixture: a declared topology, an observation, and everything Plan must
// return for it.
type planCase struct {
	name     string
	d        topology.Declared
	o        Observed
	want     []string // rendered queries, in order
	replicas topology.Replicas
	progress Progress
	needsLag bool
}

func runPlanCases(t *testing.T, cases []planCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := reported(tc.o)
			got := Decide(tc.d, o)
			if diff := cmp.Diff(tc.want, queries(got.Commands), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("queries (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.replicas, got.Replicas); diff != "" {
				t.Errorf("replicas (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.progress, got.Progress, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("progress (-want +got):\n%s", diff)
			}
			if got := NeedsCatchUpReads(tc.d, o); got != tc.needsLag {
				t.Errorf("NeedsCatchUpReads = %v, want %v", got, tc.needsLag)
			}
			if got.NeedsCatchUpReads != tc.needsLag {
				t.Errorf("Plan.NeedsCatchUpReads = %v, want %v", got.NeedsCatchUpReads, tc.needsLag)
			}
		})
	}
}

func queries(cmds []Command) []string {
	var out []string
	for _, c := range cmds {
		out = append(out, c.String())
	}
	return out
}

func TestPlanIsDeterministicUnderRowOrder(t *testing.T) {
	d := declared(3, 3, 5, 5)
	o := Observed{
		Instances: rows(coords(5, 5), one(replica(0), replica(1), mainRow(2), replica(3), replica(4))),
		Leader:    "coordinator_5",
		Span:      replicas(5, 5),
	}
	want := queries(Decide(d, o).Commands)
	reversed := o
	reversed.Instances = nil
	for i := len(o.Instances) - 1; i >= 0; i-- {
		reversed.Instances = append(reversed.Instances, o.Instances[i])
	}
	for i := 0; i < 20; i++ {
		if diff := cmp.Diff(want, queries(Decide(d, reversed).Commands)); diff != "" {
			t.Fatalf("plan depends on row order (-first +reversed):\n%s", diff)
		}
	}
}
