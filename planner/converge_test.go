package planner

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// cluster is a minimal model of a coordinator cluster that refuses what Memgraph refuses
// (duplicates, a second MAIN, demoting a replica, unregistering the MAIN, removing the leader)
// by recording misuse. Every member is alive and every replica caught up.
type cluster struct {
	members map[int]bool      // Raft members that were ADDed
	leader  int               // the coordinator we are connected to
	data    map[string]string // name -> role
	misuse  []string
}

func (c *cluster) refuse(format string, args ...any) error {
	c.misuse = append(c.misuse, fmt.Sprintf(format, args...))
	return &memgraph.Error{Kind: memgraph.KindUnknown, Message: c.misuse[len(c.misuse)-1]}
}

func (c *cluster) observe(span topology.Replicas) Observed {
	o := Observed{Leader: coordName(c.leader), Span: span}
	if !c.members[c.leader] {
		o.Instances = append(o.Instances, freshSelf(c.leader))
	}
	for _, id := range slices.Sorted(maps.Keys(c.members)) {
		role := memgraph.RoleFollower
		if id == c.leader {
			role = memgraph.RoleLeader
		}
		o.Instances = append(o.Instances, coord(id, role))
	}
	for name, role := range c.data {
		n, _ := topology.ParseDataInstanceName(name)
		o.Instances = append(o.Instances, data(n, memgraph.HealthUp, role))
	}
	return o
}

func (c *cluster) lagRows() []memgraph.InstanceLag {
	behind := map[string]int64{}
	for name := range c.data {
		behind[name] = 0
	}
	return lag(4, behind)
}

// apply carries out one command as Memgraph would (a handover: DEMOTE, then SET).
func (c *cluster) apply(cmd Command) error {
	switch cmd := cmd.(type) {
	case AddCoordinator:
		return c.addCoordinator(cmd.ID)
	case RegisterInstance:
		return c.registerInstance(cmd.Name)
	case SetInstanceToMain:
		return c.setInstanceToMain(cmd.Name)
	case ForceResetClusterState:
		c.forceReset()
		return nil
	case Handover:
		if err := c.demoteInstance(cmd.From); err != nil {
			return err
		}
		return c.setInstanceToMain(cmd.To)
	case UnregisterInstance:
		return c.unregisterInstance(cmd.Name)
	case RemoveCoordinator:
		return c.removeCoordinator(cmd.ID)
	case YieldLeadership:
		return c.yieldLeadership()
	}
	return c.refuse("%T: not a command of the model", cmd)
}

func (c *cluster) addCoordinator(id int) error {
	if c.members[id] {
		return c.refuse("ADD COORDINATOR %d: exists", id)
	}
	c.members[id] = true
	return nil
}

func (c *cluster) registerInstance(name string) error {
	if _, ok := c.data[name]; ok {
		return c.refuse("REGISTER %s: exists", name)
	}
	c.data[name] = memgraph.RoleReplica
	return nil
}

func (c *cluster) setInstanceToMain(name string) error {
	for other, role := range c.data {
		if role == memgraph.RoleMain {
			return c.refuse("SET %s TO MAIN: %s is MAIN", name, other)
		}
	}
	c.data[name] = memgraph.RoleMain
	return nil
}

// forceReset fails over to the first alive replica by name when there is no MAIN.
func (c *cluster) forceReset() {
	names := slices.Sorted(maps.Keys(c.data))
	for _, name := range names {
		if c.data[name] == memgraph.RoleMain {
			return
		}
	}
	if len(names) > 0 {
		c.data[names[0]] = memgraph.RoleMain
	}
}

func (c *cluster) demoteInstance(name string) error {
	if c.data[name] != memgraph.RoleMain {
		return c.refuse("DEMOTE %s: not MAIN", name)
	}
	c.data[name] = memgraph.RoleReplica
	return nil
}

func (c *cluster) unregisterInstance(name string) error {
	if role, ok := c.data[name]; !ok || role == memgraph.RoleMain {
		return c.refuse("UNREGISTER %s: role %q", name, role)
	}
	delete(c.data, name)
	return nil
}

func (c *cluster) removeCoordinator(id int) error {
	if !c.members[id] || id == c.leader {
		return c.refuse("REMOVE COORDINATOR %d", id)
	}
	delete(c.members, id)
	return nil
}

// yieldLeadership hands leadership to the highest other member: the worst case for a shrink,
// since the highest ordinals are the retiring ones.
func (c *cluster) yieldLeadership() error {
	ids := slices.Sorted(maps.Keys(c.members))
	for i := len(ids) - 1; i >= 0; i-- {
		if ids[i] != c.leader {
			c.leader = ids[i]
			return nil
		}
	}
	return c.refuse("YIELD LEADERSHIP: no other member")
}

// converge runs passes as the hook would until the plan is empty and the replicas declared,
// checking after every pass that no StatefulSet was shrunk below a registered member.
func converge(t *testing.T, c *cluster, want, span topology.Replicas) {
	t.Helper()
	for pass := 1; pass <= 10; pass++ {
		d := topology.Declare(testNet, want, span)
		o := c.observe(span)
		if NeedsCatchUpReads(d, o) {
			o.Lag = c.lagRows()
			o = reported(o)
		}
		res := Decide(d, o)
		for _, cmd := range res.Commands {
			if err := c.apply(cmd); err != nil {
				t.Fatalf("pass %d: %s: %v", pass, cmd, err)
			}
		}
		for id := range c.members {
			if int32(id) > res.Replicas.Coordinators {
				t.Fatalf("pass %d: coordinators shrunk to %d while coordinator_%d is a member", pass, res.Replicas.Coordinators, id)
			}
		}
		for name := range c.data {
			if n, _ := topology.ParseDataInstanceName(name); int32(n) >= res.Replicas.DataInstances {
				t.Fatalf("pass %d: data shrunk to %d while %s is registered", pass, res.Replicas.DataInstances, name)
			}
		}
		span = res.Replicas
		if len(res.Commands) == 0 && span == want {
			if len(c.misuse) > 0 {
				t.Fatalf("misuse: %v", c.misuse)
			}
			return
		}
	}
	t.Fatalf("did not converge in 10 passes; misuse %v", c.misuse)
}

func TestPlansConvergeOnAModelCluster(t *testing.T) {
	t.Run("bootstrap 3+2", func(t *testing.T) {
		c := &cluster{members: map[int]bool{}, leader: 1, data: map[string]string{}}
		converge(t, c, replicas(3, 2), replicas(3, 2))
	})
	t.Run("scale 3/3 down to 1/1 with MAIN and leadership on the highest ordinals", func(t *testing.T) {
		c := &cluster{members: map[int]bool{1: true, 2: true, 3: true}, leader: 3,
			data: map[string]string{"instance_0": "replica", "instance_1": "replica", "instance_2": "main"}}
		converge(t, c, replicas(1, 1), replicas(3, 3))
		if c.data["instance_0"] != memgraph.RoleMain || c.leader != 1 {
			t.Errorf("ended with data %v, leader %d", c.data, c.leader)
		}
	})
	t.Run("coordinators 5 to 3 with leadership on coordinator_5, data grows 2 to 3", func(t *testing.T) {
		c := &cluster{members: map[int]bool{1: true, 2: true, 3: true, 4: true, 5: true}, leader: 5,
			data: map[string]string{"instance_0": "main", "instance_1": "replica"}}
		converge(t, c, replicas(3, 3), replicas(5, 2))
	})
}
