package hooks_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// withAPIServerPods gives every Pod of a request what the API server serves besides the fields
// the harness models: the pod template's spec (the StatefulSet's), volumes, the scheduler's and
// kubelet's status, ownerReferences and managedFields — what Metacontroller sends for a real
// cluster, and most of a real request's bytes. Readiness, labels, revision, image, node and
// creation stay the harness's, so the sync's answer is unchanged.
func (h *harness) withAPIServerPods(req map[string]any) map[string]any {
	pods := req["related"].(map[string]any)["Pod.v1"].(map[string]any)
	for key, p := range pods {
		pod := p.(map[string]any)
		name := pod["metadata"].(map[string]any)["name"].(string)
		set := name[:strings.LastIndexByte(name, '-')]
		sts := h.children["StatefulSet/"+set]
		if sts == nil {
			continue
		}
		template := deepCopy(sts["spec"].(map[string]any)["template"].(map[string]any))
		spec := template["spec"].(map[string]any)
		spec["hostname"], spec["subdomain"] = name, set
		spec["serviceAccountName"], spec["schedulerName"] = "default", "default-scheduler"
		spec["volumes"] = append(volumesOf(spec), map[string]any{"name": "lib-storage",
			"persistentVolumeClaim": map[string]any{"claimName": "lib-storage-" + name}})
		if c, ok := pod["spec"].(map[string]any); ok {
			spec["containers"].([]any)[0].(map[string]any)["image"] = c["containers"].([]any)[0].(map[string]any)["image"]
			if node, ok := c["nodeName"]; ok {
				spec["nodeName"] = node
			}
		}
		pod["spec"] = spec
		meta := pod["metadata"].(map[string]any)
		meta["uid"], meta["resourceVersion"], meta["generateName"] = "uid-"+name, "12345", set+"-"
		meta["ownerReferences"] = []any{map[string]any{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": set,
			"uid": "uid-" + set, "controller": true, "blockOwnerDeletion": true}}
		meta["managedFields"] = managedFields()
		status := pod["status"].(map[string]any)
		status["hostIP"], status["podIP"], status["qosClass"] = "10.0.0.1", "10.244.0.7", "Burstable"
		status["startTime"] = "2026-01-01T00:00:00Z"
		status["containerStatuses"] = []any{map[string]any{"name": "memgraph", "ready": true, "restartCount": 0,
			"started": true, "image": "docker.io/memgraph/memgraph:3.12.0",
			"imageID":     "docker.io/memgraph/memgraph@sha256:" + strings.Repeat("ab", 32),
			"containerID": "containerd://" + strings.Repeat("cd", 32),
			"state":       map[string]any{"running": map[string]any{"startedAt": "2026-01-01T00:00:00Z"}}}}
		pods[key] = pod
	}
	return req
}

func volumesOf(spec map[string]any) []any {
	v, _ := spec["volumes"].([]any)
	return v
}

// managedFields is a kubelet's and a controller's field ownership record, as the API server
// keeps it on every pod (its keys hold escaped quotes).
func managedFields() []any {
	var fields []any
	for i, manager := range []string{"kube-controller-manager", "kubelet"} {
		f := map[string]any{}
		for _, c := range []string{"Ready", "ContainersReady", "Initialized", "PodScheduled"} {
			f[fmt.Sprintf(`k:{"type":%q}`, c)] = map[string]any{".": map[string]any{}, "f:lastTransitionTime": map[string]any{},
				"f:status": map[string]any{}, "f:type": map[string]any{}}
		}
		fields = append(fields, map[string]any{"manager": manager, "operation": "Update", "apiVersion": "v1",
			"time": fmt.Sprintf("2026-01-01T00:00:0%dZ", i), "fieldsType": "FieldsV1",
			"fieldsV1": map[string]any{"f:status": map[string]any{"f:conditions": f}}})
	}
	return fields
}

// Pods as the API server serves them are answered exactly as the harness's own: the fields the
// hook does not read, managedFields' escaped keys included, change nothing.
func TestAPIServerPodsChangeNothing(t *testing.T) {
	h := convergedHarness(t, 3, 2)
	plainCode, plain := h.post("/sync", h.request())
	fullCode, full := h.post("/sync", h.withAPIServerPods(h.request()))
	if plainCode != http.StatusOK || fullCode != http.StatusOK {
		t.Fatalf("%d %s\n%d %s", plainCode, plain, fullCode, full)
	}
	var want, got any
	if err := json.Unmarshal(plain, &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(full, &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the API server's pods changed the answer (-harness pods +API server pods):\n%s", diff)
	}
}
