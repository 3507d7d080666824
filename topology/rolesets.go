package topology

import (
	"fmt"
	"sort"
	"strings"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
)

// RoleSet is one role's StatefulSet as a sync reads its evidence: its name, its first ordinal and
// the most members a MemgraphCluster may declare, beyond which a size or a pod ordinal describes
// no member and is ignored.
//
// +kubebuilder:object:generate=false
type RoleSet struct {
	Set     string // the StatefulSet's name
	First   int    // its first ordinal
	Ceiling int32  // MaxCoordinators or MaxDataInstances
	noun    string
}

// RoleSets are the cluster's two roles, coordinators first.
func RoleSets(cluster string) [2]RoleSet {
	return [2]RoleSet{
		{CoordinatorSetName(cluster), FirstCoordinatorID, v1alpha1.MaxCoordinators, "coordinators"},
		{DataSetName(cluster), FirstDataOrdinal, v1alpha1.MaxDataInstances, "data instances"},
	}
}

// Beyond says why a size is ignored.
func (r RoleSet) Beyond() string {
	return fmt.Sprintf("beyond the %d %s a MemgraphCluster may have: ignored", r.Ceiling, r.noun)
}

// OrdinalBound is the replica count the role's StatefulSet needs to hold pod: its ordinal minus
// the set's first ordinal, plus one; 0 for a pod of another set, and 0 with a warning for an
// ordinal beyond the role's ceiling.
func (r RoleSet) OrdinalBound(pod string, ignored *Warnings) int32 {
	n, ok := PodOrdinal(r.Set, pod)
	if !ok {
		return 0
	}
	if n > int(r.Ceiling)+r.First-1 {
		ignored.Addf("Pod %s: ordinal %s is %s", v1alpha1.Clip(pod), v1alpha1.Clip(strings.TrimPrefix(pod, r.Set+"-")), r.Beyond())
		return 0
	}
	if n < r.First {
		return 0
	}
	return int32(n - r.First + 1)
}

// PodIndex is a pod's index in its role's StatefulSet (ordinal minus the first ordinal), for a
// pod of that set within the role's ceiling.
func (r RoleSet) PodIndex(pod string) (int, bool) {
	n, ok := PodOrdinal(r.Set, pod)
	if !ok || n < r.First || n-r.First >= int(r.Ceiling) {
		return 0, false
	}
	return n - r.First, true
}

// Warnings collects the evidence a sync ignored, for status.warnings.
//
// +kubebuilder:object:generate=false
type Warnings []string

// Addf adds one warning.
func (w *Warnings) Addf(format string, args ...any) { *w = append(*w, fmt.Sprintf(format, args...)) }

// Render is status.warnings: sorted, and at most MaxWarnings of them, the last counting the
// rest, so the same request always renders the same status.
func (w Warnings) Render() []string {
	if len(w) == 0 {
		return nil
	}
	out := append([]string{}, w...)
	sort.Strings(out)
	if len(out) > v1alpha1.MaxWarnings {
		rest := len(out) - (v1alpha1.MaxWarnings - 1)
		out = append(out[:v1alpha1.MaxWarnings-1], fmt.Sprintf("and %d more ignored objects", rest))
	}
	return out
}
