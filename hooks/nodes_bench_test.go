package hooks_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/memgraph-hooks/memgraph-hooks/hooks"
)

// A sync carries the Nodes the customize hook's rule selects: those the Node decorator labels
// as cordoned. BenchmarkSyncWithNodes plays Metacontroller's part for a Kubernetes cluster of N
// Nodes of which some are cordoned: every Node goes
// through the hook's /nodes/sync and gets the labels it answers, the cluster's /customize rule
// selects among them, and a converged 3x2 sync carries what it selects. It reports, from
// alternating rounds of one run, the CPU ratio of that sync to the same sync without Nodes, and
// the request's size: the cost follows the cordoned Nodes (none in the steady state, one while
// kubectl drain takes a node at a time, 1% during a surge upgrade of a node pool), not the
// Kubernetes cluster's size.
func BenchmarkSyncWithNodes(b *testing.B) {
	for _, tc := range []struct{ nodes, cordoned int }{{10, 0}, {1000, 0}, {1000, 1}, {1000, 10}} {
		n, cordoned := tc.nodes, tc.cordoned
		b.Run(fmt.Sprintf("nodes-%d/cordoned-%d", n, cordoned), func(b *testing.B) {
			base := newConvergedBench(b, 3, 2, true)
			with := base
			var req map[string]any
			if err := json.Unmarshal(base.request, &req); err != nil {
				b.Fatal(err)
			}
			related := req["related"].(map[string]any)
			nodes := map[string]any{}
			if existing, ok := related["Node.v1"].(map[string]any); ok {
				maps.Copy(nodes, existing)
			}
			maps.Copy(nodes, selectedNodes(b, req["parent"], n, cordoned))
			if len(nodes) != cordoned {
				b.Fatalf("the sync carries %d Nodes; want the %d cordoned", len(nodes), cordoned)
			}
			related["Node.v1"] = nodes
			var err error
			if with.request, err = json.Marshal(req); err != nil {
				b.Fatal(err)
			}
			syncOf := func(cb convergedBench) func() {
				return func() {
					if code, body := cb.sync(); code != http.StatusOK {
						b.Fatalf("%d %s", code, body)
					}
				}
			}
			b.ResetTimer()
			none, withNodes := alternate(b.N, 16, syncOf(base), syncOf(with))
			b.ReportMetric(float64(len(with.request))/1024, "request-KiB")
			b.ReportMetric(withNodes.cpuPerOp().Seconds()*1e6, "sync-cpu-µs/op")
			b.ReportMetric(float64(withNodes.cpu)/float64(none.cpu), "nodes/none-cpu")
			b.ReportMetric(withNodes.perOp(withNodes.bytes)/1024, "sync-KiB-alloc/op")
		})
	}
}

// selectedNodes are the Nodes, of a Kubernetes cluster of n whose first cordoned are cordoned,
// that Metacontroller puts into parent's sync request: each Node labelled as the hook's
// /nodes/sync answers, then filtered by the Nodes' rule of the hook's /customize answer.
func selectedNodes(b *testing.B, parent any, n, cordoned int) map[string]any {
	b.Helper()
	handler := hooks.NewHandler(hooks.Config{Connector: unreachable{}})
	post := func(path string, body any, out any) {
		raw, err := json.Marshal(body)
		if err != nil {
			b.Fatal(err)
		}
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, bytes.NewReader(raw)))
		if rec.Code != http.StatusOK {
			b.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
		}
		if err := json.Unmarshal(rec.Body.Bytes(), out); err != nil {
			b.Fatal(err)
		}
	}
	var customize struct {
		RelatedResources []struct {
			Resource      string
			LabelSelector *metav1.LabelSelector
		}
	}
	post("/customize", map[string]any{"parent": parent}, &customize)
	selector := labels.Nothing()
	for _, rule := range customize.RelatedResources {
		if rule.Resource == "nodes" {
			var err error
			if selector, err = metav1.LabelSelectorAsSelector(rule.LabelSelector); err != nil {
				b.Fatal(err)
			}
		}
	}
	out := map[string]any{}
	for i := range n {
		name := fmt.Sprintf("worker-%04d", i)
		node := apiServerNode(name)
		if i < cordoned {
			node["spec"].(map[string]any)["unschedulable"] = true
		}
		var decorated struct{ Labels map[string]*string }
		post("/nodes/sync", map[string]any{"object": node}, &decorated)
		nodeLabels := node["metadata"].(map[string]any)["labels"].(map[string]any)
		set := labels.Set{}
		for k, v := range nodeLabels {
			set[k] = v.(string)
		}
		for k, v := range decorated.Labels {
			if v == nil {
				delete(nodeLabels, k)
				delete(set, k)
			} else {
				nodeLabels[k], set[k] = *v, *v
			}
		}
		if selector.Matches(set) {
			out[name] = node
		}
	}
	return out
}

// apiServerNode is a Node as a kubelet on a cloud VM reports it (~5 KiB of JSON): labels,
// managed fields, capacity, conditions, addresses, node info and a list of cached images.
func apiServerNode(name string) map[string]any {
	images := []any{}
	for i := range 25 {
		images = append(images, map[string]any{
			"names":     []any{fmt.Sprintf("registry.example.com/team/app-%02d@sha256:%s", i, strings.Repeat("ef", 32)), fmt.Sprintf("registry.example.com/team/app-%02d:v1.2.%d", i, i)},
			"sizeBytes": 123456789 + i,
		})
	}
	conditions := []any{}
	for _, c := range []string{"MemoryPressure", "DiskPressure", "PIDPressure", "Ready"} {
		conditions = append(conditions, map[string]any{"type": c, "status": "False", "reason": "Kubelet" + c,
			"message": "kubelet has no " + c, "lastHeartbeatTime": "2026-12-01T00:00:00Z", "lastTransitionTime": "2026-11-01T00:00:00Z"})
	}
	resources := map[string]any{"cpu": "8", "memory": "32827160Ki", "ephemeral-storage": "101430960Ki", "pods": "110", "hugepages-2Mi": "0"}
	return map[string]any{
		"apiVersion": "v1", "kind": "Node",
		"metadata": map[string]any{"name": name, "uid": "uid-" + name, "resourceVersion": "987654",
			"creationTimestamp": "2026-11-01T00:00:00Z", "managedFields": managedFields(),
			"labels": map[string]any{"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
				"node.kubernetes.io/instance-type": "m6i.2xlarge", "topology.kubernetes.io/region": "eu-west-1",
				"topology.kubernetes.io/zone": "eu-west-1a"},
			"annotations": map[string]any{"node.alpha.kubernetes.io/ttl": "0", "volumes.kubernetes.io/controller-managed-attach-detach": "true"}},
		"spec": map[string]any{"podCIDR": "10.244.1.0/24", "providerID": "aws:///eu-west-1a/i-0123456789abcdef0"},
		"status": map[string]any{"capacity": resources, "allocatable": resources, "conditions": conditions,
			"addresses": []any{map[string]any{"type": "InternalIP", "address": "10.0.1.17"}, map[string]any{"type": "Hostname", "address": name}},
			"nodeInfo": map[string]any{"machineID": strings.Repeat("a", 32), "systemUUID": "ec2" + strings.Repeat("b", 29),
				"bootID": strings.Repeat("c", 36), "kernelVersion": "6.1.0", "osImage": "Amazon Linux 2023",
				"containerRuntimeVersion": "containerd://1.7.0", "kubeletVersion": "v1.37.2", "operatingSystem": "linux", "architecture": "amd64"},
			"images": images},
	}
}
