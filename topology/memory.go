package topology

import (
	"fmt"
	"regexp"
	"strconv"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
)

// Memgraph's memory limit. --memory-limit (MiB; src/flags/memory_limit.cpp:20-41 at v3.12.0)
// bounds what Memgraph's global memory tracker counts: the allocations of its jemalloc arenas
// (src/memory/global_memory_control.cpp), checked at src/utils/memory_tracker.cpp:106-140, where
// an allocation past the limit fails with "Memory limit exceeded!" on the threads that may refuse
// one (query execution, storage writes, index builds, recovery); elsewhere it counts without
// refusing. It does not count the process's code and thread stacks, nor the kernel's page cache
// for the WAL and snapshots (charged to the container's cgroup). Unset (0), Memgraph takes 90%
// of /proc/meminfo's MemTotal (100% with swap), which in a container is the node's memory, not
// the container's limit: it then grows past the limit and is OOM-killed instead of refusing the
// query. src/memgraph.cpp:462-466 sets the limit for every instance, coordinators included: only
// later code branches on the role.

// MemoryLimitPercent is the share of a Memgraph container's memory limit the hook passes as
// --memory-limit; the rest is the headroom for what the limit does not hold back.
const MemoryLimitPercent = 80

// memoryLimitFlagRE matches Memgraph's --memory-limit flag as gflags accepts it (one or two
// dashes, '-' or '_'), alone or with its value after '='.
var memoryLimitFlagRE = regexp.MustCompile(`^--?memory[-_]limit(=(.*))?$`)

// MemoryLimitMiB is the --memory-limit the hook derives from a container's memory limit:
// MemoryLimitPercent of it in MiB, rounded down, and at least 1 (0 would mean Memgraph's own
// default). ok is false when limits has no memory limit.
func MemoryLimitMiB(limits corev1.ResourceList) (mib int64, ok bool) {
	q, ok := limits[corev1.ResourceMemory]
	if !ok {
		return 0, false
	}
	return max(1, (q.Value()>>20)*MemoryLimitPercent/100), true
}

// memoryLimitArgs is the hook's --memory-limit for a role's Memgraph: none when the role's
// extraArgs set the flag themselves, or when its container has no memory limit.
func memoryLimitArgs(o v1alpha1.PodOptions) []string {
	if _, set, _ := userMemoryLimit(o.ExtraArgs); set {
		return nil
	}
	if mib, ok := MemoryLimitMiB(o.Resources.Limits); ok {
		return []string{fmt.Sprintf("--memory-limit=%d", mib)}
	}
	return nil
}

// userMemoryLimit reads --memory-limit from extraArgs (the last one wins, as in gflags; the value
// follows '=' or is the next argument). known is false when it is not a positive number of MiB:
// 0 is Memgraph's own default, which depends on the node.
func userMemoryLimit(args []string) (mib int64, set, known bool) {
	for i, a := range args {
		m := memoryLimitFlagRE.FindStringSubmatch(a)
		if m == nil {
			continue
		}
		value := m[2]
		if m[1] == "" && i+1 < len(args) {
			value = args[i+1]
		}
		n, err := strconv.ParseUint(value, 10, 63)
		mib, set, known = int64(n), true, err == nil && n > 0
	}
	return mib, set, known
}

// MemoryLimitBytes is the --memory-limit in bytes that role's Memgraph runs with once its pods
// run the current template: the one its extraArgs set, else the hook's. ok is false when there
// is none (Memgraph then takes its own default from the node's memory) or it is not a number.
func (c *Cluster) MemoryLimitBytes(role string) (bytes int64, ok bool) {
	o := c.mc.Spec.CoordinatorTemplate.PodOptions
	if role == RoleData {
		o = c.mc.Spec.DataTemplate.PodOptions
	}
	mib, set, known := userMemoryLimit(o.ExtraArgs)
	if !set {
		mib, known = MemoryLimitMiB(o.Resources.Limits)
	}
	if !known || mib > 1<<43 {
		return 0, false
	}
	return mib << 20, true
}

// MemoryWarnings are the warnings about the data pods' memory that admission gives (the
// ValidatingAdmissionPolicy memgraph-hooks-memory, manifests/memory-warning-policy.yaml, and
// status.warnings): requests.memory set and different from limits.memory, or set without a
// limit. A data instance holds its graph in memory, so a request below what it will use lets
// the scheduler place it where that memory is not free, and under memory pressure the kubelet
// evicts, and the kernel OOM-kills, pods above their request first.
func MemoryWarnings(r corev1.ResourceRequirements) []string {
	request, requested := r.Requests[corev1.ResourceMemory]
	if !requested {
		return nil
	}
	limit, limited := r.Limits[corev1.ResourceMemory]
	switch {
	case !limited:
		return []string{fmt.Sprintf("%s sets requests.memory %s and no limits.memory: %s, and Memgraph runs without --memory-limit, "+
			"so it takes 90%% of the node's memory as its limit and can grow until the node runs out; set limits.memory equal to requests.memory",
			dataResourcesPath, request.String(), memoryRequestRisk)}
	case request.Cmp(limit) != 0:
		return []string{fmt.Sprintf("%s sets requests.memory %s and limits.memory %s: %s; set requests.memory equal to limits.memory",
			dataResourcesPath, request.String(), limit.String(), memoryRequestRisk)}
	}
	return nil
}

const (
	dataResourcesPath = "spec.dataTemplate.resources"
	memoryRequestRisk = "a data instance holds its graph in memory, and under memory pressure the kubelet evicts, " +
		"and the kernel OOM-kills, pods using more than their request first"
)

// Warnings are admission's warnings about the spec (MemoryWarnings); status.warnings carries them.
func (c *Cluster) Warnings() []string { return MemoryWarnings(c.mc.Spec.DataTemplate.Resources) }
