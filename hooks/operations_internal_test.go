package hooks

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

func clusterWithOperation(t *testing.T, uid string, prior *v1alpha1.Operation) *topology.Cluster {
	t.Helper()
	mc := &v1alpha1.MemgraphCluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.APIVersion, Kind: v1alpha1.Kind},
		ObjectMeta: metav1.ObjectMeta{Name: "mg", Namespace: "db", UID: k8stypes.UID("uid-" + uid)},
	}
	mc.Status.LastOperation = prior
	c, err := topology.NewCluster(mc)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func op(writes string, at time.Time) *v1alpha1.Operation {
	return &v1alpha1.Operation{Writes: writes, Result: v1alpha1.OperationSucceeded, Time: metav1.NewTime(at)}
}

// status.lastOperation never goes backwards when a pass starts from a parent whose status is
// older than the one the previous pass wrote (Metacontroller's informer cache lags).
func TestOperationLogNeverGoesBackwards(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	older, newer := op("DEMOTE instance_0; SET instance_2 TO MAIN", t0), op("REGISTER instance_3", t0.Add(time.Minute))
	l := newOperationLog()

	if got := l.report(clusterWithOperation(t, "a", older), nil, t0.Add(time.Hour)); !cmp.Equal(got, older) {
		t.Errorf("nothing written, nothing remembered: %+v, want the prior record", got)
	}
	written := &v1alpha1.Operation{Writes: "REGISTER instance_3", Result: v1alpha1.OperationSucceeded}
	got := l.report(clusterWithOperation(t, "a", older), written, t0.Add(time.Minute+300*time.Millisecond))
	if diff := cmp.Diff(newer, got); diff != "" {
		t.Errorf("a pass that wrote (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(newer, l.report(clusterWithOperation(t, "a", older), nil, t0.Add(2*time.Minute))); diff != "" {
		t.Errorf("a stale parent after the write (-want +got):\n%s", diff)
	}
	latest := op("UNREGISTER instance_3", t0.Add(5*time.Minute)) // another hook replica wrote later
	if diff := cmp.Diff(latest, l.report(clusterWithOperation(t, "a", latest), nil, t0.Add(6*time.Minute))); diff != "" {
		t.Errorf("a later record in the parent (-want +got):\n%s", diff)
	}
	if got := l.report(clusterWithOperation(t, "b", nil), nil, t0); got != nil {
		t.Errorf("a cluster recreated under another uid shows %+v, want nothing", got)
	}
}

// The log remembers at most maxRemembered clusters and forgets the one written longest ago.
func TestOperationLogIsBounded(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	l := newOperationLog()
	for i := range maxRemembered + 1 {
		c := clusterWithOperation(t, fmt.Sprint(i), nil)
		l.report(c, &v1alpha1.Operation{Writes: "REGISTER instance_0", Result: v1alpha1.OperationSucceeded}, t0.Add(time.Duration(i)*time.Second))
	}
	if len(l.last) != maxRemembered {
		t.Errorf("%d clusters remembered, want %d", len(l.last), maxRemembered)
	}
	if _, ok := l.last["uid-0"]; ok {
		t.Error("the cluster written longest ago is still remembered")
	}
	if _, ok := l.last[fmt.Sprint("uid-", maxRemembered)]; !ok {
		t.Error("the latest cluster is not remembered")
	}
}
