package topology

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memgraph-hooks/memgraph-hooks/internal/apitest"
)

// budgetState is what the API server holds of the two data budgets: the pod <cluster>-main
// selects and the pod <cluster>-data leaves out ("" for no MAIN's budget, no exclusion).
type budgetState struct{ main, excluded string }

// renderedBudgets reads the budgetState that Render's children declare.
func renderedBudgets(t *testing.T, children []map[string]any) budgetState {
	t.Helper()
	var s budgetState
	for _, child := range children {
		if child["kind"] != "PodDisruptionBudget" {
			continue
		}
		selector := child["spec"].(map[string]any)["selector"].(map[string]any)
		switch child["metadata"].(map[string]any)["name"] {
		case MainBudgetName("memgraph"):
			s.main = selector["matchLabels"].(map[string]any)[LabelPodName].(string)
		case DataBudgetName("memgraph"):
			if exprs, ok := selector["matchExpressions"].([]any); ok {
				s.excluded = exprs[0].(map[string]any)["values"].([]any)[0].(string)
			}
		}
	}
	return s
}

// budgetsOf counts the budgets that select pod in s.
func budgetsOf(s budgetState, pod string) int {
	n := 0
	if s.main == pod {
		n++
	}
	if s.excluded != pod {
		n++
	}
	return n
}

// Metacontroller writes the two data budgets one at a time, in either order. Whatever the order,
// a pod that is not MAIN is never under two budgets — the Eviction API refuses such a pod outright,
// and kubectl drain gives up — and once the passes settle every data pod is under exactly one
// budget, the MAIN's under <cluster>-main.
func TestBudgetsFollowTheMainOneWriteAtATime(t *testing.T) {
	c := admit(t, apitest.MinimalCluster())
	pods := []string{"memgraph-data-0", "memgraph-data-1", "memgraph-data-2"}
	for _, tc := range []struct {
		name  string
		start budgetState
		mains []string // the MAIN's pod, pass after pass until settled, then the next
	}{
		{"the MAIN becomes known", budgetState{}, []string{"memgraph-data-0"}},
		{"a handover moves MAIN", budgetState{"memgraph-data-0", "memgraph-data-0"}, []string{"memgraph-data-1"}},
		{"MAIN moves twice", budgetState{"memgraph-data-0", "memgraph-data-0"}, []string{"memgraph-data-1", "memgraph-data-2"}},
		{"MAIN moves back", budgetState{"memgraph-data-1", "memgraph-data-1"}, []string{"memgraph-data-0", "memgraph-data-1"}},
		{"the MAIN's pod is no longer declared", budgetState{"memgraph-data-5", "memgraph-data-5"}, []string{""}},
	} {
		for _, mainFirst := range []bool{true, false} {
			name := fmt.Sprintf("%s, MAIN's budget written first: %t", tc.name, mainFirst)
			state := tc.start
			for _, mainPod := range tc.mains {
				for pass := 0; ; pass++ {
					if pass == 3 {
						t.Fatalf("%s: MAIN in %q: not settled after 3 passes at %+v", name, mainPod, state)
					}
					children, err := Render(c, Rendering{Replicas: Replicas{3, 3}, Partitions: Partitions{3, 3},
						Generations: TemplateGenerations{1, 1}, MainPod: mainPod, HeldPod: state.main})
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					want := renderedBudgets(t, children)
					if want == state {
						break
					}
					writes := []func(*budgetState){
						func(s *budgetState) { s.main = want.main },
						func(s *budgetState) { s.excluded = want.excluded },
					}
					if !mainFirst {
						writes[0], writes[1] = writes[1], writes[0]
					}
					for _, write := range writes {
						write(&state)
						for _, pod := range pods {
							if pod != mainPod && budgetsOf(state, pod) > 1 {
								t.Errorf("%s: MAIN in %q, pass %d: %s, not MAIN, under two budgets at %+v", name, mainPod, pass, pod, state)
							}
						}
					}
				}
				settled := budgetState{main: mainPod, excluded: mainPod}
				if diff := cmp.Diff(settled, state, cmp.AllowUnexported(budgetState{})); diff != "" {
					t.Errorf("%s: MAIN in %q: settled budgets (-want +got):\n%s", name, mainPod, diff)
				}
			}
		}
	}
}
