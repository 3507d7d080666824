package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// A change is what one verb does to one MemgraphCluster: a JSON merge patch of its declaration
// (spec or an annotation), exactly what docs/operations.md does by hand with kubectl, and what
// --wait follows afterwards. Verbs never touch status, children or pods.
type change struct {
	Verb    string
	Cluster string
	Patch   string // the JSON merge patch
	Kubectl string // the kubectl command a user would type for the same change
	Wait    waitFor
}

// waitFor is what --wait waits for: the condition Type at Status, reported for the patched
// generation (annotations do not bump it: then any observation counts), or for restart the
// rollout of RestartedAt into both pod templates.
type waitFor struct {
	Type        v1alpha1.ConditionType
	Status      string
	RestartedAt string
}

var instanceRE = regexp.MustCompile(`^instance_(0|[1-9][0-9]*)$`)

// plan builds verb's change for the stored object mgc, refusing with the reason what admission
// would refuse (the patched object must pass v1alpha1.ValidateUpdate, the Go twin of the CRD's
// rules) and what cannot mean anything (a switchover to an instance that is not declared).
func plan(verb string, mgc *unstructured.Unstructured, to string, now time.Time) (change, error) {
	name := mgc.GetName()
	c := change{Verb: verb, Cluster: name}
	patchSpec := func(field string, value any) {
		raw, _ := json.Marshal(map[string]any{"spec": map[string]any{field: value}})
		c.Patch = string(raw)
		c.Kubectl = fmt.Sprintf("kubectl patch mgc %s --type merge -p '%s'", name, c.Patch)
	}
	annotate := func(key string, value *string) {
		var v any
		if value != nil {
			v = *value
		}
		raw, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{key: v}}})
		c.Patch = string(raw)
		if value == nil {
			c.Kubectl = fmt.Sprintf("kubectl annotate mgc %s %s-", name, key)
		} else {
			c.Kubectl = fmt.Sprintf("kubectl annotate mgc %s %s=%s --overwrite", name, key, *value)
		}
	}
	hibernated, _, _ := unstructured.NestedBool(mgc.Object, "spec", "hibernate")
	switch verb {
	case "switchover":
		m := instanceRE.FindStringSubmatch(to)
		if m == nil {
			return c, fmt.Errorf("--to %q: %s", to, v1alpha1.MsgPreferredMain)
		}
		n, _ := strconv.Atoi(m[1])
		data, found, _ := unstructured.NestedInt64(mgc.Object, "spec", "dataInstances")
		if !found {
			data = int64(v1alpha1.DefaultDataInstances)
		}
		if int64(n) >= data {
			return c, fmt.Errorf("--to %s: %s (cluster %s declares %d data instances)", to, v1alpha1.MsgPreferredDeclared, name, data)
		}
		if hibernated {
			return c, fmt.Errorf("cluster %s is hibernated: no instance runs to take MAIN over; wake it first (kubectl memgraph wake %s)", name, name)
		}
		patchSpec("preferredMain", to)
		c.Wait = waitFor{Type: v1alpha1.ConditionConverged, Status: "True"}
	case "pause":
		v := "true"
		annotate(topology.AnnotationPaused, &v)
		c.Wait = waitFor{Type: v1alpha1.ConditionPaused, Status: "True"}
	case "resume":
		annotate(topology.AnnotationPaused, nil)
		c.Wait = waitFor{Type: v1alpha1.ConditionPaused, Status: "False"}
	case "hibernate":
		patchSpec("hibernate", true)
		c.Wait = waitFor{Type: v1alpha1.ConditionHibernated, Status: "True"}
	case "wake":
		patchSpec("hibernate", false)
		c.Wait = waitFor{Type: v1alpha1.ConditionConverged, Status: "True"}
	case "restart":
		if hibernated {
			return c, fmt.Errorf("cluster %s is hibernated: it runs no pod to restart; wake it first (kubectl memgraph wake %s)", name, name)
		}
		v := now.UTC().Format(time.RFC3339)
		annotate(topology.AnnotationRestartedAt, &v)
		c.Wait = waitFor{Type: v1alpha1.ConditionConverged, Status: "True", RestartedAt: v}
	default:
		return c, fmt.Errorf("unknown verb %q", verb)
	}
	return c, admits(mgc, c.Patch)
}

// admits applies patch to mgc and checks the result as the API server would: the CRD's rules
// and its transition rules (v1alpha1.ValidateUpdate).
func admits(mgc *unstructured.Unstructured, patch string) error {
	oldRaw, err := json.Marshal(mgc.Object)
	if err != nil {
		return err
	}
	newRaw, err := jsonpatch.MergePatch(oldRaw, []byte(patch))
	if err != nil {
		return fmt.Errorf("apply the patch: %w", err)
	}
	old, err := v1alpha1.DecodeCluster(oldRaw)
	if err != nil {
		return fmt.Errorf("the stored MemgraphCluster %s: %w", mgc.GetName(), err)
	}
	patched, err := v1alpha1.DecodeCluster(newRaw)
	if err != nil {
		return fmt.Errorf("the patched MemgraphCluster %s: %w", mgc.GetName(), err)
	}
	if err := v1alpha1.ValidateUpdate(old, patched); err != nil {
		return fmt.Errorf("admission would refuse it: %w", err)
	}
	return nil
}
