package topology

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"k8s.io/utils/ptr"
)

// The init container exists only when enabled, raises to maxMapCount with the chosen image, and
// its command holds no "$(", which the kubelet would expand as an environment variable.
func TestSysctlInitContainer(t *testing.T) {
	if _, ok := sysctlInitContainer(v1alpha1.SysctlInitContainer{Enabled: ptr.To(false), MaxMapCount: v1alpha1.DefaultMaxMapCount, Image: "busybox"}); ok {
		t.Error("a disabled init container is rendered")
	}
	if _, ok := sysctlInitContainer(v1alpha1.SysctlInitContainer{MaxMapCount: v1alpha1.DefaultMaxMapCount, Image: "busybox"}); ok {
		t.Error("an init container is rendered while enabled is unset")
	}
	c, ok := sysctlInitContainer(v1alpha1.SysctlInitContainer{Enabled: ptr.To(true), MaxMapCount: 262144, Image: "busybox:1.37.0"})
	if !ok {
		t.Fatal("an enabled init container is not rendered")
	}
	want := []string{"/bin/sh", "-c", `read current < /proc/sys/vm/max_map_count; [ "$current" -ge 262144 ] || sysctl -w vm.max_map_count=262144`}
	if diff := cmp.Diff(want, c.Command); diff != "" {
		t.Errorf("command (-want +got):\n%s", diff)
	}
	if strings.Contains(strings.Join(c.Command, " "), "$(") {
		t.Errorf("command %q holds a $( the kubelet would expand", c.Command)
	}
	if c.Image != "busybox:1.37.0" || c.SecurityContext == nil || !*c.SecurityContext.Privileged || *c.SecurityContext.RunAsUser != 0 {
		t.Errorf("init container %+v: want the chosen image, privileged, as root", c)
	}
}
