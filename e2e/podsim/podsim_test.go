package podsim

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
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
