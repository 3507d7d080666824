package topology

import (
	"strconv"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// SysctlContainerName is the data pods' optional init container (SysctlInitContainer).
const SysctlContainerName = "init-sysctl"

// sysctlScript raises vm.max_map_count to n unless the node already allows as many: the setting
// is node-wide, and another workload on the node may need the higher value someone else set. It
// has no "$(", which the kubelet would read as a reference to an environment variable.
func sysctlScript(n int64) string {
	v := strconv.FormatInt(n, 10)
	return `read current < /proc/sys/vm/max_map_count; [ "$current" -ge ` + v + ` ] || sysctl -w vm.max_map_count=` + v
}

// sysctlInitContainer is the init container SysctlInitContainer asks for; ok is false when it is
// disabled. Writing a node-wide sysctl takes root and privilege, the one exception to the pod's
// non-root security context. Every field the API server would default is spelled out, so the
// stored container equals this one.
func sysctlInitContainer(s v1alpha1.SysctlInitContainer) (corev1.Container, bool) {
	if s.Enabled == nil || !*s.Enabled {
		return corev1.Container{}, false
	}
	return corev1.Container{
		Name:                     SysctlContainerName,
		Image:                    s.Image,
		ImagePullPolicy:          corev1.PullIfNotPresent,
		Command:                  []string{"/bin/sh", "-c", sysctlScript(s.MaxMapCount)},
		TerminationMessagePath:   corev1.TerminationMessagePathDefault,
		TerminationMessagePolicy: corev1.TerminationMessageReadFile,
		SecurityContext: &corev1.SecurityContext{
			Privileged:   ptr.To(true),
			RunAsUser:    ptr.To(int64(0)),
			RunAsNonRoot: ptr.To(false),
		},
	}, true
}
