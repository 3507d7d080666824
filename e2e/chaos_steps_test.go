//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// operate makes one change a user would: scale either role, roll the image up or down, move
// preferredMain, pause or resume, hibernate or wake.
func (c *chaos) operate() {
	c.operations++
	switch c.rng.IntN(6) {
	case 0:
		n := 2 + c.rng.IntN(chaosMaxData-1)
		if c.patch(fmt.Sprintf(`{"dataInstances": %d}`, n)) {
			c.data = n
			c.note("scale data instances to %d", n)
		}
	case 1:
		n := 3 + 2*c.rng.IntN(2)
		if c.patch(fmt.Sprintf(`{"coordinators": %d}`, n)) {
			c.coordinators = n
			c.note("scale coordinators to %d", n)
		}
	case 2:
		tag := map[string]string{"3.12.0": "3.13.0", "3.13.0": "3.12.0"}[c.tag]
		if c.patch(fmt.Sprintf(`{"image": {"tag": %q}}`, tag)) {
			c.tag = tag
			c.note("image.tag %s (a rollout)", tag)
		}
	case 3:
		to := topology.DataInstanceName(c.rng.IntN(c.data))
		if c.patch(fmt.Sprintf(`{"preferredMain": %q}`, to)) {
			c.note("preferredMain %s", to)
		}
	case 4:
		c.paused = !c.paused
		c.s.annotate(chaosName, topology.AnnotationPaused, strconv.FormatBool(c.paused))
		c.note("paused %t", c.paused)
	case 5:
		c.mu.Lock()
		c.hibernateChanged = time.Now() // before the patch: pods may go as soon as it lands
		c.mu.Unlock()
		if c.patch(fmt.Sprintf(`{"hibernate": %t}`, !c.hibernated)) {
			c.mu.Lock()
			c.hibernated = !c.hibernated
			c.mu.Unlock()
			c.note("hibernate %t", c.hibernated)
		}
	}
}

// fault injects one fault: a pod of the MAIN, the leader, a replica or a follower deleted; the
// hook SIGKILLed and restarted; the API server or the controllers restarted; a coordinator
// unreachable or slow for the hook for a while; a replica's data wiped.
func (c *chaos) fault() {
	c.faults++
	switch c.rng.IntN(8) {
	case 0, 1:
		c.killMember()
	case 2:
		c.s.proc.kill()
		down := time.Duration(c.rng.IntN(3000)) * time.Millisecond
		c.note("SIGKILL the hook; restart in %s", down)
		time.Sleep(down)
		c.s.proc.start()
	case 3:
		down := time.Duration(1000+c.rng.IntN(3000)) * time.Millisecond
		c.note("restart the API server (down %s)", down)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := testEnv.RestartAPIServer(ctx, down); err != nil {
			c.s.t.Fatalf("restart the API server: %v", err)
		}
	case 4:
		c.note("restart kube-controller-manager, kube-scheduler and kwok")
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := testEnv.RestartControllers(ctx); err != nil {
			c.s.t.Fatalf("restart the controllers: %v", err)
		}
	case 5:
		c.heal()
		c.partitioned = c.s.network(chaosName).Coordinator(1 + c.rng.IntN(c.coordinators)).Host
		c.s.links.partition(c.partitioned, true)
		c.note("coordinator %s stops answering the hook", c.partitioned)
	case 6:
		c.heal()
		c.slowHost = c.s.network(chaosName).Coordinator(1 + c.rng.IntN(c.coordinators)).Host
		d := time.Duration(100+c.rng.IntN(900)) * time.Millisecond
		_ = c.s.world.SetLatency(c.slowHost, d)
		c.note("coordinator %s answers %s late", c.slowHost, d)
	case 7:
		c.wipeReplica()
	}
}

// chaosDoubleFault is how long the soak keeps the MAIN's pod and a replica's volume from both
// going: losing the MAIN while the only other copies of its writes are gone loses writes in
// Memgraph itself, which is no fault of the hook's. Memgraph v3.12.0 fails over to any alive SYNC
// replica that answers, however far behind (max_failover_replica_lag defaults to the largest
// uint64: coordinator_instance.cpp 1517–1604), and the one holding the most transactions wins —
// a sole candidate whatever it holds (1361–1476); the old MAIN, back, is then reset to the new
// MAIN's history. 15 s covers instance_down_timeout_sec (5 s), the failover, a recreated pod's
// start and a wiped replica's recovery on the machine the soak runs on.
const chaosDoubleFault = 15 * time.Second

// killMember deletes the pod of the MAIN, the leader, a replica or a follower. The MAIN is
// spared for chaosDoubleFault after a wipe.
func (c *chaos) killMember() {
	g, ok := c.group()
	if !ok {
		c.note("no led Raft group to pick a member from")
		return
	}
	var pods []string
	switch c.rng.IntN(4) {
	case 0:
		if g.Main != "" && time.Since(c.wipedAt) > chaosDoubleFault {
			pods = append(pods, dataPodOf(chaosName, g.Main))
			c.mainKilledAt = time.Now()
		}
	case 1:
		pods = append(pods, fmt.Sprintf("%s-%d", topology.CoordinatorSetName(chaosName), g.Leader))
	case 2:
		for _, d := range g.Data {
			if d.Name != g.Main {
				pods = append(pods, dataPodOf(chaosName, d.Name))
			}
		}
	case 3:
		for _, m := range g.Members {
			if m.ID != g.Leader {
				pods = append(pods, fmt.Sprintf("%s-%d", topology.CoordinatorSetName(chaosName), m.ID))
			}
		}
	}
	if len(pods) == 0 {
		return
	}
	pod := pods[c.rng.IntN(len(pods))]
	c.mu.Lock()
	if c.killed == nil {
		c.killed = map[string]time.Time{}
	}
	c.killed[pod] = time.Now()
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := testEnv.Client.CoreV1().Pods(c.s.ns).Delete(ctx, pod, metav1.DeleteOptions{})
	c.note("delete pod %s (MAIN %s, leader %d): %v", pod, g.Main, g.Leader, err)
}

// wipeReplica restarts a running replica's instance with empty storage, as a lost volume
// would. A replica whose process does not run (its pod is gone, or the cluster hibernates) is
// not wiped: the simulator's Wipe starts the process, which no pod would. Nor is one wiped while
// the MAIN is down or within chaosDoubleFault of its pod's deletion.
func (c *chaos) wipeReplica() {
	g, ok := c.group()
	if !ok || time.Since(c.mainKilledAt) < chaosDoubleFault || !c.mainUp(g) {
		c.note("no replica wiped: the MAIN's pod went %s ago or the MAIN is down", time.Since(c.mainKilledAt).Round(time.Second))
		return
	}
	for _, d := range g.Data {
		if d.Name != g.Main && d.Host != "" && d.Health == "up" && c.s.world.Running(d.Host) {
			c.wipedAt = time.Now()
			c.note("wipe replica %s: %v", d.Name, c.s.world.Wipe(d.Host))
			return
		}
	}
}

// mainUp: the group has a MAIN whose process runs.
func (c *chaos) mainUp(g sim.ClusterSnapshot) bool {
	for _, d := range g.Data {
		if d.Name == g.Main {
			return d.Health == "up"
		}
	}
	return false
}

// heal ends a partition and a slow coordinator.
func (c *chaos) heal() {
	if c.partitioned != "" {
		c.s.links.partition(c.partitioned, false)
		c.note("coordinator %s answers again", c.partitioned)
		c.partitioned = ""
	}
	if c.slowHost != "" {
		_ = c.s.world.SetLatency(c.slowHost, 0)
		c.note("coordinator %s answers promptly again", c.slowHost)
		c.slowHost = ""
	}
}

func (c *chaos) stopFaults() {
	c.heal()
	if !c.s.proc.running() {
		c.s.proc.start()
	}
}
