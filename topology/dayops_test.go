package topology

import (
	"testing"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/internal/apitest"
	"k8s.io/utils/ptr"
)

func admitCluster(t *testing.T, edit func(mc *v1alpha1.MemgraphCluster)) *Cluster {
	t.Helper()
	mc := apitest.MinimalCluster()
	edit(mc)
	c, err := NewCluster(mc)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Any value that is not plainly false pauses: an ambiguous request to stop is read as one, and
// the warning says how it was read.
func TestPausedAnnotation(t *testing.T) {
	for _, tc := range []struct {
		annotations map[string]string
		paused      bool
		warns       bool
	}{
		{nil, false, false},
		{map[string]string{"memgraph.com/other": "true"}, false, false},
		{map[string]string{AnnotationPaused: "true"}, true, false},
		{map[string]string{AnnotationPaused: "True"}, true, false},
		{map[string]string{AnnotationPaused: "false"}, false, false},
		{map[string]string{AnnotationPaused: "0"}, false, false},
		{map[string]string{AnnotationPaused: "yes"}, true, true},
		{map[string]string{AnnotationPaused: ""}, true, true},
	} {
		c := admitCluster(t, func(mc *v1alpha1.MemgraphCluster) { mc.Annotations = tc.annotations })
		paused, warning := c.Paused()
		if paused != tc.paused || (warning != "") != tc.warns {
			t.Errorf("%v: paused %v, warning %q; want paused %v, a warning %v", tc.annotations, paused, warning, tc.paused, tc.warns)
		}
	}
}

func TestAllowDowngradeAnnotation(t *testing.T) {
	for _, tc := range []struct {
		annotations map[string]string
		allowed     bool
		warns       bool
	}{
		{nil, false, false},
		{map[string]string{AnnotationPaused: "true"}, false, false},
		{map[string]string{AnnotationAllowDowngrade: "true"}, true, false},
		{map[string]string{AnnotationAllowDowngrade: "TRUE"}, true, false},
		{map[string]string{AnnotationAllowDowngrade: "false"}, false, false},
		// An ambiguous permission to risk the data is none.
		{map[string]string{AnnotationAllowDowngrade: "yes"}, false, true},
		{map[string]string{AnnotationAllowDowngrade: ""}, false, true},
	} {
		c := admitCluster(t, func(mc *v1alpha1.MemgraphCluster) { mc.Annotations = tc.annotations })
		allowed, warning := c.AllowDowngrade()
		if allowed != tc.allowed || (warning != "") != tc.warns {
			t.Errorf("%v: allowed %v, warning %q; want allowed %v, a warning %v", tc.annotations, allowed, warning, tc.allowed, tc.warns)
		}
	}
}

func TestDayTwoDeclarations(t *testing.T) {
	c := admitCluster(t, func(mc *v1alpha1.MemgraphCluster) {
		mc.Spec.DataInstances = 3
		mc.Spec.PreferredMain = "instance_2"
		mc.Spec.Hibernate = ptr.To(true)
	})
	if !c.Hibernate() || c.PreferredMain() != "instance_2" || c.Declare(Replicas{}).PreferredMain != "instance_2" {
		t.Errorf("hibernate %v, preferred MAIN %q, declared %q", c.Hibernate(), c.PreferredMain(), c.Declare(Replicas{}).PreferredMain)
	}
	if awake := admitCluster(t, func(*v1alpha1.MemgraphCluster) {}); awake.Hibernate() || awake.PreferredMain() != "" {
		t.Errorf("defaults: hibernate %v, preferred MAIN %q", awake.Hibernate(), awake.PreferredMain())
	}
	if got := c.DataStartupBudgetSeconds(); got != int64((2 * time.Hour).Seconds()) {
		t.Errorf("data startup budget %v, want the default probe's 1440 × 5 s", got)
	}
}
