package planner

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
)

// podsRunning is workloads whose data pods run these images, by index, all at one revision.
func podsRunning(images ...string) *Workloads {
	w := &Workloads{Image: images[0], StepTimeout: metav1.Duration{Duration: stepTimeout},
		Data: RolloutSet{Exists: true, UpdateRevision: revNew, CurrentRevision: revNew, Span: int32(len(images))}}
	for i, image := range images {
		w.Data.Pods = append(w.Data.Pods, RolloutPod{Index: i, Revision: revNew, Ready: true, Image: image})
	}
	return w
}

// A newer MAIN cannot replicate to an older replica (Memgraph v3.12.0 src/rpc/utils.hpp 29–87):
// no path makes a data instance MAIN while another registered, alive one runs an older known
// version, the old MAIN excepted only when it leaves right after (retirement, a rollout's last
// step).
func TestANewerMainNeverReplicatesToAnOlderReplica(t *testing.T) {
	three := func(r ...memgraph.Instance) []memgraph.Instance { return rows(coords(3, 1), r) }
	caught := lag(9, caughtUp(0, 1, 2))
	runPlanCases(t, []planCase{{
		name: "retirement: the newer survivor is passed over while an older one runs",
		d:    declared(3, 2, 3, 3),
		o: Observed{Instances: three(replica(0), replica(1), mainRow(2)), Leader: "coordinator_1", Span: replicas(3, 3),
			Lag: caught, Workloads: podsRunning(mg313, mg312, mg312)},
		want:     []string{qHandover(2, 1), qUnregister(2)},
		replicas: replicas(3, 3),
		progress: Progress{Leader: "coordinator_1", Main: "instance_2", RetiringDataInstances: names("instance", 2),
			HandoverFrom: "instance_2", HandoverTo: "instance_1"},
		needsLag: true,
	}, {
		name: "retirement: the retiring MAIN itself is the exception (it is unregistered right after)",
		d:    declared(3, 2, 3, 3),
		o: Observed{Instances: three(replica(0), replica(1), mainRow(2)), Leader: "coordinator_1", Span: replicas(3, 3),
			Lag: caught, Workloads: podsRunning(mg313, mg313, mg312)},
		want:     []string{qHandover(2, 0), qUnregister(2)},
		replicas: replicas(3, 3),
		progress: Progress{Leader: "coordinator_1", Main: "instance_2", RetiringDataInstances: names("instance", 2),
			HandoverFrom: "instance_2", HandoverTo: "instance_0"},
		needsLag: true,
	}, {
		name: "switchover: the old MAIN stays on as a replica, so a newer preferred MAIN waits",
		d:    preferring(declared(3, 3, 3, 3), "instance_1"),
		o: Observed{Instances: three(mainRow(0), replica(1), replica(2)), Leader: "coordinator_1", Span: replicas(3, 3),
			Lag: caught, Workloads: podsRunning(mg312, mg313, mg313)},
		replicas: replicas(3, 3),
		progress: Progress{Leader: "coordinator_1", Main: "instance_0", SwitchoverPending: "switchover of MAIN from instance_0 to " +
			"the preferred instance_1 waits: instance_1 runs Memgraph 3.13.0 and instance_0 runs the older 3.12.0: a newer MAIN " +
			"cannot replicate to an older replica"},
		needsLag: true,
	}, {
		name: "switchover: a down older instance does not hold it (it is not replicated to)",
		d:    preferring(declared(3, 3, 3, 3), "instance_1"),
		o: Observed{Instances: three(mainRow(0), replica(1), downRow(2)), Leader: "coordinator_1", Span: replicas(3, 3),
			Lag: lag(9, caughtUp(0, 1)), Workloads: podsRunning(mg313, mg313, mg312)},
		want:     []string{qHandover(0, 1)},
		replicas: replicas(3, 3),
		progress: Progress{Leader: "coordinator_1", Main: "instance_0", HandoverFrom: "instance_0", HandoverTo: "instance_1", Switchover: true},
		needsLag: true,
	}, {
		name:     "election: the oldest version alive is elected, not the lowest ordinal",
		d:        declared(3, 3, 3, 3),
		o:        Observed{Instances: three(replica(0), replica(1), replica(2)), Leader: "coordinator_1", Span: replicas(3, 3), Workloads: podsRunning(mg313, mg312, mg313)},
		want:     []string{qMain(1)},
		replicas: replicas(3, 3),
		progress: Progress{Leader: "coordinator_1", Promote: "instance_1"},
	}, {
		name: "election: when only an instance not ours (registered elsewhere) is oldest, nobody is elected and the status says why",
		d:    declared(3, 1, 3, 1),
		o: Observed{Instances: three(replica(0), foreignReplica(1)), Leader: "coordinator_1", Span: replicas(3, 1),
			Workloads: podsRunning(mg313, mg312)},
		replicas: replicas(3, 1),
		progress: Progress{Leader: "coordinator_1", PromotionWaits: "no MAIN is elected: instance_0 runs Memgraph 3.13.0 and " +
			"instance_1 runs the older 3.12.0: a newer MAIN cannot replicate to an older replica"},
	}, {
		name:     "versions unknown (latest): no rule, the lowest ordinal is elected",
		d:        declared(3, 2, 3, 2),
		o:        Observed{Instances: three(replica(0), replica(1)), Leader: "coordinator_1", Span: replicas(3, 2), Workloads: podsRunning(mgTip, mg312)},
		want:     []string{qMain(0)},
		replicas: replicas(3, 2),
		progress: Progress{Leader: "coordinator_1", Promote: "instance_0"},
	}})
}

// foreignReplica is instance_<n> registered by someone else, at another management address: not
// ours to retire, yet it replicates from the MAIN.
func foreignReplica(n int) memgraph.Instance {
	row := replica(n)
	row.ManagementServer = "elsewhere.example:10000"
	return row
}
