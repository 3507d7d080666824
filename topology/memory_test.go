package topology

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/internal/apitest"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func memoryResources(request, limit string) corev1.ResourceRequirements {
	var r corev1.ResourceRequirements
	if request != "" {
		r.Requests = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(request)}
	}
	if limit != "" {
		r.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(limit)}
	}
	return r
}

// memoryArgs are the --memory-limit flags among a pod's memgraph container args.
func memoryArgs(pod corev1.PodSpec) []string {
	var out []string
	args := pod.Containers[0].Args
	for i, a := range args {
		if memoryLimitFlagRE.MatchString(a) {
			out = append(out, a)
			if !strings.Contains(a, "=") && i+1 < len(args) {
				out = append(out, args[i+1])
			}
		}
	}
	return out
}

// A role whose memgraph container has a memory limit runs Memgraph with --memory-limit at
// MemoryLimitPercent of it in MiB, unless its extraArgs pass their own; without a limit, none.
func TestMemoryLimitRender(t *testing.T) {
	for _, tc := range []struct {
		name              string
		coordinator, data v1alpha1.PodOptions
		want              [2][]string
		wantBytes         [2]int64 // 0: none known
	}{
		{name: "no limit", want: [2][]string{nil, nil}},
		{name: "a request only", data: v1alpha1.PodOptions{Resources: memoryResources("4Gi", "")}, want: [2][]string{nil, nil}},
		{name: "a limit on each role",
			coordinator: v1alpha1.PodOptions{Resources: memoryResources("", "512Mi")},
			data:        v1alpha1.PodOptions{Resources: memoryResources("8Gi", "8Gi")},
			want:        [2][]string{{"--memory-limit=409"}, {"--memory-limit=6553"}},
			wantBytes:   [2]int64{409 << 20, 6553 << 20}},
		{name: "a decimal limit rounds down to MiB",
			data: v1alpha1.PodOptions{Resources: memoryResources("", "1G")}, // 953.67 MiB
			want: [2][]string{nil, {"--memory-limit=762"}}, wantBytes: [2]int64{0, 762 << 20}},
		{name: "the user's own flag wins",
			data: v1alpha1.PodOptions{Resources: memoryResources("", "8Gi"), ExtraArgs: []string{"--memory_limit=2048"}},
			want: [2][]string{nil, {"--memory_limit=2048"}}, wantBytes: [2]int64{0, 2048 << 20}},
		{name: "the user's flag with its value apart",
			coordinator: v1alpha1.PodOptions{Resources: memoryResources("", "1Gi"), ExtraArgs: []string{"--memory-limit", "300"}},
			want:        [2][]string{{"--memory-limit", "300"}, nil}, wantBytes: [2]int64{300 << 20, 0}},
		{name: "the user's 0 is Memgraph's own default, unknown here",
			data: v1alpha1.PodOptions{Resources: memoryResources("", "8Gi"), ExtraArgs: []string{"--memory-limit=0"}},
			want: [2][]string{nil, {"--memory-limit=0"}}},
		{name: "a tiny limit still sets a limit",
			data: v1alpha1.PodOptions{Resources: memoryResources("", "1Mi")},
			want: [2][]string{nil, {"--memory-limit=1"}}, wantBytes: [2]int64{0, 1 << 20}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mc := apitest.MinimalCluster()
			mc.Spec.CoordinatorTemplate.PodOptions = tc.coordinator
			mc.Spec.DataTemplate.PodOptions = tc.data
			pods := placedPods(t, mc)
			c := admit(t, mc)
			for i, role := range []string{RoleCoordinator, RoleData} {
				if diff := cmp.Diff(tc.want[i], memoryArgs(pods[i])); diff != "" {
					t.Errorf("%s --memory-limit (-want +got):\n%s", role, diff)
				}
				got, ok := c.MemoryLimitBytes(role)
				if ok != (tc.wantBytes[i] != 0) || got != tc.wantBytes[i] {
					t.Errorf("%s MemoryLimitBytes = %d, %v; want %d", role, got, ok, tc.wantBytes[i])
				}
			}
		})
	}
}

// The hook's --memory-limit comes after its own flags and before the user's extraArgs.
func TestMemoryLimitBeforeExtraArgs(t *testing.T) {
	mc := apitest.MinimalCluster()
	mc.Spec.DataTemplate.Resources = memoryResources("2Gi", "2Gi")
	mc.Spec.DataTemplate.ExtraArgs = []string{"--log-level=TRACE"}
	args := placedPods(t, mc)[1].Containers[0].Args
	at := slices.Index(args, "--memory-limit=1638")
	if at < 0 || at != len(args)-2 || args[at-1] != "--storage-snapshot-on-exit=false" {
		t.Errorf("args %q: want --memory-limit=1638 between the hook's flags and the extraArgs", args)
	}
}

// Admission warns when the data pods' memory request differs from their limit, or has none.
func TestMemoryWarnings(t *testing.T) {
	for _, tc := range []struct {
		request, limit string
		want           string // a part of the one warning; "" for none
	}{
		{"", "", ""},
		{"", "4Gi", ""}, // the API server defaults the request to the limit
		{"4Gi", "4Gi", ""},
		{"4096Mi", "4Gi", ""},
		{"2Gi", "4Gi", "spec.dataTemplate.resources sets requests.memory 2Gi and limits.memory 4Gi"},
		{"4Gi", "", "spec.dataTemplate.resources sets requests.memory 4Gi and no limits.memory"},
	} {
		got := MemoryWarnings(memoryResources(tc.request, tc.limit))
		switch {
		case tc.want == "" && len(got) > 0:
			t.Errorf("request %q, limit %q: warnings %q, want none", tc.request, tc.limit, got)
		case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], tc.want)):
			t.Errorf("request %q, limit %q: warnings %q, want one with %q", tc.request, tc.limit, got, tc.want)
		}
	}
	mc := apitest.MinimalCluster()
	mc.Spec.CoordinatorTemplate.Resources = memoryResources("1Gi", "2Gi") // coordinators are not warned about
	if w := admit(t, mc).Warnings(); len(w) > 0 {
		t.Errorf("Warnings() = %q for a coordinator request below its limit", w)
	}
	mc.Spec.DataTemplate.Resources = memoryResources("1Gi", "2Gi")
	if w := admit(t, mc).Warnings(); len(w) != 1 {
		t.Errorf("Warnings() = %q, want the data pods' memory warning", w)
	}
}
