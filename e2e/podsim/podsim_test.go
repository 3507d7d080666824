package podsim

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

func podWithClaims(claims ...string) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "c-data-1", Namespace: "ns"},
		Spec:       corev1.PodSpec{Hostname: "c-data-1", Subdomain: "c-data"},
	}
	for _, c := range claims {
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: c, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: c},
		}})
	}
	return pod
}

func TestPodHostIsTheGoverningServiceName(t *testing.T) {
	if got, want := PodHost(podWithClaims()), "c-data-1.c-data.ns.svc.cluster.local"; got != want {
		t.Errorf("PodHost = %q, want %q", got, want)
	}
	if got := PodHost(&corev1.Pod{}); got != "" {
		t.Errorf("a pod without hostname/subdomain has no stable name, got %q", got)
	}
}

func TestVolumeKeyTracksClaimIdentity(t *testing.T) {
	pod := podWithClaims("lib-c-data-1", "log-c-data-1")
	first := map[string]types.UID{"lib-c-data-1": "u1", "log-c-data-1": "u2"}
	same := map[string]types.UID{"log-c-data-1": "u2", "lib-c-data-1": "u1"}
	fresh := map[string]types.UID{"lib-c-data-1": "u3", "log-c-data-1": "u4"}
	if volumeKey(pod, first) != volumeKey(pod, same) {
		t.Error("the same claims must give the same key")
	}
	if volumeKey(pod, first) == volumeKey(pod, fresh) {
		t.Error("claims recreated under the same names must count as fresh volumes")
	}
	key := volumeKey(pod, first)
	if !volumesExist(key, first) || volumesExist(key, fresh) || volumesExist("", first) {
		t.Error("volumesExist must report whether any of the pod's claims is still there")
	}
}

func TestImageTagIsTheMemgraphContainersTag(t *testing.T) {
	for image, want := range map[string]string{
		"docker.io/memgraph/memgraph:3.12.0":                "3.12.0",
		"registry.local:5000/memgraph/memgraph:3.13.0-rc1":  "3.13.0-rc1",
		"registry.local:5000/memgraph/memgraph":             "",
		"docker.io/memgraph/memgraph:3.12.0@sha256:0123abc": "",
		"memgraph:latest": "latest",
	} {
		pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "sidecar", Image: "busybox:1.36"}, {Name: topology.ContainerName, Image: image}}}}
		if got := ImageTag(pod); got != want {
			t.Errorf("ImageTag(%q) = %q, want %q", image, got, want)
		}
	}
}

// dataPod is a scheduled data Pod on claim lib-c-data-1 running image.
func dataPod(uid types.UID, image string) corev1.Pod {
	pod := podWithClaims("lib-c-data-1")
	pod.UID, pod.Labels, pod.Spec.NodeName = uid, map[string]string{v1alpha1.LabelComponent: topology.RoleData}, "node"
	pod.Spec.Containers = []corev1.Container{{Name: topology.ContainerName, Image: image, Ports: []corev1.ContainerPort{
		{Name: topology.PortNameBolt, ContainerPort: 7687}, {Name: topology.PortNameManagement, ContainerPort: 10000}}}}
	return *pod
}

// A Pod recreated with a new image on the same claims restarts its instance at the new tag on
// its state. The World tells which version an instance runs by accepting StartData of exactly
// its running spec as a no-op (and refusing any other spec for a known host).
func TestReplacedPodRestartsAtItsImageTag(t *testing.T) {
	w := sim.NewWorld()
	defer w.Close()
	p := &Pods{World: w, tracked: map[string]*instance{}}
	claims := map[string]types.UID{"lib-c-data-1": "u1"}
	host := PodHost(podWithClaims())
	runsAt := func(version string) bool {
		return w.StartData(sim.DataSpec{Host: host, BoltPort: 7687, ManagementPort: 10000, Version: version}) == nil
	}
	p.reconcile([]corev1.Pod{dataPod("a", "memgraph/memgraph:3.12.0")}, claims)
	if !runsAt("3.12.0") || runsAt("3.13.0") {
		t.Fatalf("the instance does not run its pod's 3.12.0: %+v", p.Events())
	}
	p.reconcile(nil, claims) // the pod is deleted: the process dies, its state stays
	p.reconcile([]corev1.Pod{dataPod("b", "memgraph/memgraph:3.13.0")}, claims)
	if !runsAt("3.13.0") || p.Version(host) != "3.13.0" {
		t.Fatalf("the replaced pod's instance does not run 3.13.0: %+v", p.Events())
	}
	var got []string
	for _, ev := range p.Events() {
		got = append(got, ev.What)
	}
	if want := []string{"start data at 3.12.0", "kill", "restart at 3.13.0"}; !slices.Equal(got, want) {
		t.Errorf("lifecycle %q, want %q", got, want)
	}
}
