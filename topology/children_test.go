package topology

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/internal/apitest"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/ from the current output")

var renderCases = []struct {
	name       string
	cluster    func() *v1alpha1.MemgraphCluster
	replicas   Replicas
	partitions Partitions
}{
	{"default", apitest.MinimalCluster, Replicas{Coordinators: 3, DataInstances: 2}, Partitions{Coordinators: 3, DataInstances: 2}},
	{"retain-delete", apitest.RetainDeleted, Replicas{Coordinators: 3, DataInstances: 2}, Partitions{Coordinators: 3, DataInstances: 2}},
	{"every-knob", apitest.EveryKnob, Replicas{Coordinators: 5, DataInstances: 3}, Partitions{Coordinators: 5, DataInstances: 1}},
	{"external-load-balancer", externalLoadBalancer, Replicas{Coordinators: 3, DataInstances: 2}, Partitions{Coordinators: 3, DataInstances: 2}},
	{"external-node-port", externalNodePort, Replicas{Coordinators: 3, DataInstances: 2}, Partitions{Coordinators: 3, DataInstances: 2}},
}

// admit is NewCluster of a fixture that must be valid.
func admit(t *testing.T, mc *v1alpha1.MemgraphCluster) *Cluster {
	t.Helper()
	c, err := NewCluster(mc)
	if err != nil {
		t.Fatalf("NewCluster: %v", err)
	}
	return c
}

func render(t *testing.T, mc *v1alpha1.MemgraphCluster, r Replicas) []map[string]any {
	t.Helper()
	return renderPartitioned(t, mc, r, Partitions{Coordinators: r.Coordinators, DataInstances: r.DataInstances})
}

func renderPartitioned(t *testing.T, mc *v1alpha1.MemgraphCluster, r Replicas, p Partitions) []map[string]any {
	t.Helper()
	children, err := Render(admit(t, mc), Rendering{Replicas: r, Partitions: p, Generations: TemplateGenerations{Coordinators: 1, DataInstances: 1}})
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	return children
}

func templateHashOf(sts map[string]any) string {
	meta, _ := sts["metadata"].(map[string]any)
	annotations, _ := meta["annotations"].(map[string]any)
	hash, _ := annotations[AnnotationTemplateHash].(string)
	return hash
}

func childID(c map[string]any) string {
	return strings.ToLower(c["kind"].(string)) + "-" + c["metadata"].(map[string]any)["name"].(string)
}

// Every case renders exactly the children of its golden files, each matching its file (run with
// -update to rewrite them): a child that stops being rendered fails as surely as one that changes.
func TestDesiredChildrenGolden(t *testing.T) {
	for _, tc := range renderCases {
		t.Run(tc.name, func(t *testing.T) {
			children := renderPartitioned(t, tc.cluster(), tc.replicas, tc.partitions)
			if !*update {
				goldenFiles, err := filepath.Glob(filepath.Join("testdata", tc.name, "*.yaml"))
				if err != nil {
					t.Fatal(err)
				}
				var rendered, golden []string
				for _, child := range children {
					rendered = append(rendered, childID(child)+".yaml")
				}
				for _, f := range goldenFiles {
					golden = append(golden, filepath.Base(f))
				}
				slices.Sort(rendered)
				if diff := cmp.Diff(golden, rendered); diff != "" {
					t.Errorf("the children rendered differ from the golden files in testdata/%s (-golden +rendered):\n%s", tc.name, diff)
				}
			}
			for _, child := range children {
				got, err := yaml.Marshal(child)
				if err != nil {
					t.Fatal(err)
				}
				path := filepath.Join("testdata", tc.name, childID(child)+".yaml")
				if *update {
					if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(path, got, 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run go test ./topology -update to create it)", err)
				}
				if diff := cmp.Diff(string(want), string(got)); diff != "" {
					t.Errorf("%s (-golden +got):\n%s", path, diff)
				}
			}
		})
	}
}

func TestDesiredChildrenOrder(t *testing.T) {
	var got []string
	for _, c := range render(t, apitest.MinimalCluster(), Replicas{3, 2}) {
		got = append(got, childID(c))
	}
	want := []string{
		"statefulset-memgraph-coordinator", "statefulset-memgraph-data",
		"service-memgraph-coordinator", "service-memgraph-data", "service-memgraph", "service-memgraph-rw", "service-memgraph-ro",
		"poddisruptionbudget-memgraph-coordinator", "poddisruptionbudget-memgraph-data",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("children order (-want +got):\n%s", diff)
	}
}

// No child may carry a JSON null anywhere: Metacontroller's merge treats a desired null as a
// change on every sync. Nor a top-level status or a creationTimestamp.
func TestDesiredChildrenHaveNoNulls(t *testing.T) {
	for _, tc := range renderCases {
		for _, child := range render(t, tc.cluster(), tc.replicas) {
			raw, err := json.Marshal(child)
			if err != nil {
				t.Fatal(err)
			}
			var v any
			if err := json.Unmarshal(raw, &v); err != nil {
				t.Fatal(err)
			}
			for _, p := range findForbidden(v, "") {
				t.Errorf("%s/%s: %s", tc.name, childID(child), p)
			}
			if _, ok := child["status"]; ok {
				t.Errorf("%s/%s has a top-level status", tc.name, childID(child))
			}
		}
	}
}

func findForbidden(v any, path string) []string {
	var found []string
	switch t := v.(type) {
	case nil:
		found = append(found, "null at "+path)
	case map[string]any:
		for k, c := range t {
			if k == "creationTimestamp" {
				found = append(found, "creationTimestamp at "+path+"."+k)
			}
			found = append(found, findForbidden(c, path+"."+k)...)
		}
	case []any:
		for i, c := range t {
			found = append(found, findForbidden(c, fmt.Sprintf("%s[%d]", path, i))...)
		}
	}
	return found
}

// The volumeClaimTemplates are in the exact form the API server stores, and a size written as
// 2048Mi is rendered as the server canonicalises it.
func TestVolumeClaimTemplatesInStoredForm(t *testing.T) {
	children := render(t, apitest.EveryKnob(), Replicas{5, 3})
	got := children[0]["spec"].(map[string]any)["volumeClaimTemplates"]
	want := []any{
		storedClaim("lib-storage", "2Gi", "ReadWriteOncePod", "fast"),
		storedClaim("log-storage", "512Mi", "ReadWriteMany", "slow"),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("coordinator volumeClaimTemplates (-want +got):\n%s", diff)
	}
	data := children[1]["spec"].(map[string]any)["volumeClaimTemplates"]
	if diff := cmp.Diff([]any{storedClaim("lib-storage", "50Gi", "ReadWriteOnce", "ssd")}, data); diff != "" {
		t.Errorf("data volumeClaimTemplates without a log claim (-want +got):\n%s", diff)
	}
}

func storedClaim(name, size, mode, class string) map[string]any {
	return map[string]any{
		"apiVersion": "v1",
		"kind":       "PersistentVolumeClaim",
		"metadata":   map[string]any{"name": name},
		"spec": map[string]any{
			"accessModes":      []any{mode},
			"resources":        map[string]any{"requests": map[string]any{"storage": size}},
			"storageClassName": class,
			"volumeMode":       "Filesystem",
		},
		"status": map[string]any{"phase": "Pending"},
	}
}

func TestDesiredChildrenRendersReplicasAsGiven(t *testing.T) {
	children := render(t, apitest.MinimalCluster(), Replicas{Coordinators: 7, DataInstances: 0})
	for i, want := range []int64{7, 0} {
		if got := children[i]["spec"].(map[string]any)["replicas"]; got != want {
			t.Errorf("%s replicas = %v, want %d", childID(children[i]), got, want)
		}
	}
}

// Nothing that could render into objects Kubernetes or Memgraph would reject becomes a Cluster.
func TestNewClusterRefusesWhatCannotBeRendered(t *testing.T) {
	invalid := apitest.MinimalCluster()
	invalid.Spec.Coordinators = 4
	noNamespace := apitest.MinimalCluster()
	noNamespace.Namespace = ""
	for name, tc := range map[string]struct {
		mc   *v1alpha1.MemgraphCluster
		want string
	}{
		"nil cluster":  {nil, "no MemgraphCluster"},
		"no namespace": {noNamespace, "metadata.namespace"},
		"invalid spec": {invalid, v1alpha1.MsgCoordinators},
	} {
		c, err := NewCluster(tc.mc)
		if c != nil || err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, error %v, want none and an error containing %q", name, c, err, tc.want)
		}
	}
	var invalidErr *v1alpha1.ValidationError
	if _, err := NewCluster(invalid); !errors.As(err, &invalidErr) || invalidErr.Name != "memgraph" || invalidErr.Namespace != "default" {
		t.Errorf("an invalid spec's error %v does not name the object", err)
	}
}

func TestDesiredChildrenRefusesWhatItCannotRender(t *testing.T) {
	for name, tc := range map[string]struct {
		c    *Cluster
		r    Replicas
		want string
	}{
		"no cluster":       {nil, Replicas{3, 2}, "no admitted MemgraphCluster"},
		"a zero cluster":   {&Cluster{}, Replicas{3, 2}, "no admitted MemgraphCluster"},
		"negative replica": {admit(t, apitest.MinimalCluster()), Replicas{3, -1}, "must not be negative"},
	} {
		_, err := Render(tc.c, Rendering{Replicas: tc.r})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, tc.want)
		}
	}
}

// A Cluster is admitted once: rendering it leaves it as it was, and the object it came from is
// never changed by admission.
func TestClusterIsDefaultedOnceAndNeverModified(t *testing.T) {
	mc := apitest.MinimalCluster()
	c := admit(t, mc)
	if diff := cmp.Diff(apitest.MinimalCluster(), mc); diff != "" {
		t.Errorf("NewCluster changed its input (-before +after):\n%s", diff)
	}
	before := c.Spec()
	render(t, apitest.MinimalCluster(), Replicas{3, 2})
	if _, err := Render(c, Rendering{Replicas: Replicas{5, 4}, Partitions: Partitions{2, 1}, Generations: TemplateGenerations{3, 4}}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, c.Spec(), apitest.Quantities); diff != "" {
		t.Errorf("rendering changed the cluster (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(apitest.MinimalCluster().Defaulted().Spec, before, apitest.Quantities); diff != "" {
		t.Errorf("admitted spec differs from Defaulted() (-want +got):\n%s", diff)
	}
	if c.Network() != (Network{Cluster: "memgraph", Namespace: "default", ClusterDomain: v1alpha1.DefaultClusterDomain,
		Ports: Ports{Bolt: v1alpha1.DefaultBoltPort, Management: v1alpha1.DefaultManagementPort, Replication: v1alpha1.DefaultReplicationPort, Coordinator: v1alpha1.DefaultCoordinatorPort}}) {
		t.Errorf("Network = %+v", c.Network())
	}
	if c.Replicas() != (Replicas{v1alpha1.DefaultCoordinators, v1alpha1.DefaultDataInstances}) || c.TLSSecretName() != "" {
		t.Errorf("Replicas = %+v, TLS secret %q", c.Replicas(), c.TLSSecretName())
	}
}

// User labels reach metadata and pods but never a selector, so adding one never touches an
// immutable StatefulSet field.
func TestUserLabelsStayOutOfSelectors(t *testing.T) {
	for _, c := range render(t, apitest.EveryKnob(), Replicas{5, 3}) {
		spec := c["spec"].(map[string]any)
		sel, ok := spec["selector"].(map[string]any)
		if ml, isSTS := sel["matchLabels"]; ok && isSTS {
			sel = ml.(map[string]any)
		}
		if _, leaked := sel["team"]; leaked {
			t.Errorf("%s selector carries a user label: %v", childID(c), sel)
		}
		if got := c["metadata"].(map[string]any)["labels"].(map[string]any)["team"]; got != "graph" {
			t.Errorf("%s metadata lacks the user label team=graph", childID(c))
		}
	}
}

func TestDesiredChildrenRefusesANegativePartition(t *testing.T) {
	_, err := Render(admit(t, apitest.MinimalCluster()), Rendering{Replicas: Replicas{3, 2}, Partitions: Partitions{Coordinators: 3, DataInstances: -1}})
	if err == nil || !strings.Contains(err.Error(), "partitions must not be negative") {
		t.Errorf("error %v, want one about a negative partition", err)
	}
}

// The partition is rendered as given, for each role, so the hook alone decides which pods the
// StatefulSet controller may replace.
func TestDesiredChildrenRendersPartitionsAsGiven(t *testing.T) {
	children := renderPartitioned(t, apitest.MinimalCluster(), Replicas{3, 2}, Partitions{Coordinators: 2, DataInstances: 0})
	for i, want := range []int64{2, 0} {
		strategy := children[i]["spec"].(map[string]any)["updateStrategy"].(map[string]any)
		got := strategy["rollingUpdate"].(map[string]any)["partition"]
		if got != want || strategy["type"] != "RollingUpdate" {
			t.Errorf("%s updateStrategy = %v, want RollingUpdate with partition %d", childID(children[i]), strategy, want)
		}
	}
}

func podTemplate(child map[string]any) map[string]any {
	return child["spec"].(map[string]any)["template"].(map[string]any)
}

// memgraph.com/restartedAt on the MemgraphCluster lands in both pod templates (and so rolls
// every pod); the cluster's other annotations do not.
func TestRestartedAtReachesBothPodTemplates(t *testing.T) {
	mc := apitest.MinimalCluster()
	mc.Annotations = map[string]string{AnnotationRestartedAt: "2026-01-02T03:04:05Z", "owner": "team-graph"}
	children := render(t, mc, Replicas{3, 2})
	for _, sts := range children[:2] {
		got := podTemplate(sts)["metadata"].(map[string]any)["annotations"]
		want := map[string]any{AnnotationRestartedAt: "2026-01-02T03:04:05Z"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s pod template annotations (-want +got):\n%s", childID(sts), diff)
		}
	}
	for _, sts := range render(t, apitest.MinimalCluster(), Replicas{3, 2})[:2] {
		if a, ok := podTemplate(sts)["metadata"].(map[string]any)["annotations"]; ok {
			t.Errorf("%s: pod template annotations %v without the cluster annotation", childID(sts), a)
		}
	}
}

// Each StatefulSet carries the generation its pod template arrived with, as given; none when 0.
func TestDesiredChildrenAnnotateTemplateGenerations(t *testing.T) {
	children, err := Render(admit(t, apitest.MinimalCluster()), Rendering{Replicas: Replicas{3, 2}, Partitions: Partitions{3, 2}, Generations: TemplateGenerations{7, 0}})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []any{"7", nil} {
		annotations := children[i]["metadata"].(map[string]any)["annotations"].(map[string]any)
		if got := annotations[AnnotationTemplateGeneration]; got != want {
			t.Errorf("%s: %s = %v, want %v", childID(children[i]), AnnotationTemplateGeneration, got, want)
		}
	}
}

// The template hash changes with anything in a role's pod template and with nothing else, and
// PodTemplateHashes returns exactly what Render annotates.
func TestPodTemplateHashes(t *testing.T) {
	hashes := func(mc *v1alpha1.MemgraphCluster) [2]string {
		t.Helper()
		c, d, err := PodTemplateHashes(admit(t, mc), "", "")
		if err != nil {
			t.Fatal(err)
		}
		return [2]string{c, d}
	}
	base := hashes(apitest.MinimalCluster())
	children := renderPartitioned(t, apitest.MinimalCluster(), Replicas{5, 7}, Partitions{1, 3})
	if got := [2]string{templateHashOf(children[0]), templateHashOf(children[1])}; got != base {
		t.Errorf("Render annotates %v, PodTemplateHashes says %v", got, base)
	}
	if base[0] == "" || base[0] == base[1] {
		t.Errorf("hashes %v: want two different non-empty hashes", base)
	}
	for _, tc := range []struct {
		name                     string
		edit                     func(mc *v1alpha1.MemgraphCluster)
		coordinators, dataChange bool
	}{
		{"image tag", func(mc *v1alpha1.MemgraphCluster) { mc.Spec.Image.Tag = "3.12.1" }, true, true},
		{"restartedAt", func(mc *v1alpha1.MemgraphCluster) { mc.Annotations = map[string]string{AnnotationRestartedAt: "now"} }, true, true},
		{"data extraArgs", func(mc *v1alpha1.MemgraphCluster) { mc.Spec.DataTemplate.ExtraArgs = []string{"--log-level=TRACE"} }, false, true},
		{"coordinator probe", func(mc *v1alpha1.MemgraphCluster) { mc.Spec.CoordinatorTemplate.Probes.Liveness.PeriodSeconds = 7 }, true, false},
		{"counts only", func(mc *v1alpha1.MemgraphCluster) { mc.Spec.Coordinators, mc.Spec.DataInstances = 5, 3 }, false, false},
		{"another annotation", func(mc *v1alpha1.MemgraphCluster) { mc.Annotations = map[string]string{"owner": "x"} }, false, false},
	} {
		mc := apitest.MinimalCluster()
		tc.edit(mc)
		got := hashes(mc)
		if (got[0] != base[0]) != tc.coordinators || (got[1] != base[1]) != tc.dataChange {
			t.Errorf("%s: hashes %v from %v, want coordinators changed %v, data changed %v",
				tc.name, got, base, tc.coordinators, tc.dataChange)
		}
	}
}

// The image the rollout reports and the step timeout it judges by come from the admitted spec.
func TestClusterImageAndStepTimeout(t *testing.T) {
	mc := apitest.MinimalCluster()
	if c := admit(t, mc); c.Image() != "docker.io/memgraph/memgraph:3.12.0" || c.StepTimeoutSeconds() != 600 {
		t.Errorf("defaults: image %q, step timeout %ds", c.Image(), c.StepTimeoutSeconds())
	}
	mc.Spec.Image.Tag = "sha256:" + apitest.Hex64
	mc.Spec.Rollout.StepTimeout = "1h30m"
	if c := admit(t, mc); c.Image() != "docker.io/memgraph/memgraph@sha256:"+apitest.Hex64 || c.StepTimeoutSeconds() != 5400 {
		t.Errorf("digest and 1h30m: image %q, step timeout %ds", c.Image(), c.StepTimeoutSeconds())
	}
}
