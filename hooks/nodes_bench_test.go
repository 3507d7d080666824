package hooks_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"testing"
)

// The customize hook asks for every Node (a label cannot select a cordon), so each sync request
// carries the Kubernetes cluster's Nodes whole, as the API server serves them. BenchmarkSyncWithNodes
// measures what that costs a converged 3x2 sync: the same request with and without N Nodes,
// in alternating rounds of one run, reported as the CPU ratio nodes ÷ none and the request size.
func BenchmarkSyncWithNodes(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("nodes-%d", n), func(b *testing.B) {
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
			for i := range n {
				name := fmt.Sprintf("worker-%04d", i)
				nodes[name] = apiServerNode(name)
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
