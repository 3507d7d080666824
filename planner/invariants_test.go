package planner_test

import (
	"fmt"
	"slices"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// facts are what the invariants need to know about one input, derived from the observation as
// the package doc defines it (not through the planner's own code).
type facts struct {
	in       fuzzInput
	coords   map[string]memgraph.Instance // coordinator rows by name
	data     map[string]memgraph.Instance // data rows by name
	mains    []string                     // data rows reporting role main
	unproven []string                     // other data rows not seen as an up replica
	leaders  map[string]bool              // the observed leader and every row reporting role leader
	// halfJoined are coordinator rows without a bolt_server other than the leader's own: Raft
	// members whose ADD timed out; ADD is refused for them and REMOVE ends the leader process.
	halfJoined map[string]bool
	// leaderNotReady: the observed leader reports its own health unknown (just elected, or in a
	// FORCE RESET): its table is no evidence about anything.
	leaderNotReady bool
	retiringC      map[string]bool // coordinators of the retiring range: [declared, current) or our identity above the declared count
	retiringD      map[string]bool
	declaredC      map[string]topology.Coordinator
	declaredD      map[string]topology.DataInstance
}

func factsOf(in fuzzInput) facts {
	f := facts{in: in, coords: map[string]memgraph.Instance{}, data: map[string]memgraph.Instance{},
		leaders: map[string]bool{}, halfJoined: map[string]bool{}, retiringC: map[string]bool{}, retiringD: map[string]bool{},
		declaredC: map[string]topology.Coordinator{}, declaredD: map[string]topology.DataInstance{}}
	d := in.declared
	for _, c := range d.Coordinators {
		f.declaredC[c.Name] = c
	}
	for _, di := range d.DataInstances {
		f.declaredD[di.Name] = di
	}
	for _, c := range d.RetiringCoordinators {
		f.retiringC[c.Name] = true
	}
	for _, di := range d.RetiringDataInstances {
		f.retiringD[di.Name] = true
	}
	if in.observed.Leader != "" {
		f.leaders[in.observed.Leader] = true
	} else if _, state := planner.ReadLeadership(in.observed.Instances); state == planner.LeaderNotReady {
		f.leaderNotReady = true
	}
	for _, row := range in.observed.Instances {
		if row.IsCoordinator() {
			f.coords[row.Name] = row
			if row.Role == memgraph.RoleLeader {
				f.leaders[row.Name] = true
			}
			if row.BoltServer == "" && row.Name != in.observed.Leader {
				f.halfJoined[row.Name] = true
			}
			if row.Name == in.observed.Leader && row.Health == memgraph.HealthUnknown {
				f.leaderNotReady = true
			}
			if id, ok := topology.ParseCoordinatorName(row.Name); ok && id > len(d.Coordinators) &&
				row.CoordinatorServer == d.Network.Coordinator(id).CoordinatorServer {
				f.retiringC[row.Name] = true
			}
			continue
		}
		f.data[row.Name] = row
		switch {
		case row.Role == memgraph.RoleMain:
			f.mains = append(f.mains, row.Name)
		case row.Health != memgraph.HealthUp || row.Role != memgraph.RoleReplica:
			f.unproven = append(f.unproven, row.Name)
		}
		if n, ok := topology.ParseDataInstanceName(row.Name); ok && n >= len(d.DataInstances) &&
			row.ManagementServer == d.Network.DataInstance(n).ManagementServer {
			f.retiringD[row.Name] = true
		}
	}
	return f
}

// retiringRegistered: a member of the data retiring range is still registered.
func (f facts) retiringRegistered() bool {
	for name := range f.retiringD {
		if _, ok := f.data[name]; ok {
			return true
		}
	}
	return false
}

// violations lists every broken invariant of res for in.
func violations(in fuzzInput, res planner.Plan) []string {
	f := factsOf(in)
	var out []string
	bad := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	if f.leaderNotReady {
		return append(f.notReadyViolations(res), rolloutViolations(f, res)...)
	}
	handedOver := map[string]bool{}
	handovers := 0
	for i, cmd := range res.Commands {
		switch c := cmd.(type) {
		case planner.AddCoordinator:
			name := topology.CoordinatorName(c.ID)
			_, declared := f.declaredC[name]
			// A retiring leader never ADDed adds itself before yielding, so a later pass can remove it.
			selfBeforeYield := name == in.observed.Leader && f.retiringC[name] && i+1 < len(res.Commands) &&
				isYield(res.Commands[len(res.Commands)-1])
			if !declared && !selfBeforeYield {
				bad("%s: neither a declared coordinator nor a retiring leader adding itself before it yields", cmd)
			}
			if decl := in.declared.Network.Coordinator(c.ID); c.Config != (memgraph.CoordinatorConfig{BoltServer: decl.BoltServer, CoordinatorServer: decl.CoordinatorServer, ManagementServer: decl.ManagementServer}) {
				bad("%s: not the declared identity %+v", cmd, decl)
			}
			if row, ok := f.coords[name]; ok && row.BoltServer != "" {
				bad("%s: %s is registered already (Memgraph refuses the id)", cmd, name)
			}
			if f.halfJoined[name] {
				bad("%s: %s is half-joined (Memgraph refuses the id)", cmd, name)
			}
		case planner.RegisterInstance:
			decl, ok := f.declaredD[c.Name]
			if !ok {
				bad("%s: not a declared data instance", cmd)
			} else if c.Config != (memgraph.InstanceConfig{BoltServer: decl.BoltServer, ManagementServer: decl.ManagementServer, ReplicationServer: decl.ReplicationServer}) {
				bad("%s: not the declared identity %+v", cmd, decl)
			}
			if _, ok := f.data[c.Name]; ok {
				bad("%s: %s is registered already", cmd, c.Name)
			}
			if len(f.mains) == 0 && len(f.unproven) > 0 || len(f.mains) > 0 && !f.lagRowOf(f.mains) {
				bad("%s: beside no MAIN proven alive (MAINs %v, unproven %v): a new, empty instance could be the only failover "+
					"candidate", cmd, f.mains, f.unproven)
			}
		case planner.SetInstanceToMain:
			if _, ok := f.declaredD[c.Name]; !ok {
				bad("%s: promotes an instance that is not declared", cmd)
			}
			if len(f.mains) > 0 || len(f.unproven) > 0 {
				bad("%s: beside MAIN %v or instances whose role is unproven %v (Memgraph refuses a second MAIN)", cmd, f.mains, f.unproven)
			}
			if f.retiringRegistered() {
				bad("%s: chooses by ordinal while a retiring member is registered (only FORCE RESET lets Memgraph pick the most up-to-date)", cmd)
			}
			if older := f.olderAlive(c.Name, ""); len(older) > 0 {
				bad("%s: a newer MAIN over older replicas %v", cmd, older)
			}
		case planner.ForceResetClusterState:
			if len(f.mains) > 0 || len(f.unproven) > 0 || !f.retiringRegistered() {
				bad("%s: with MAIN %v, unproven %v, retiring registered %v", cmd, f.mains, f.unproven, f.retiringRegistered())
			}
		case planner.Handover:
			handovers++
			from, to := handoverTargets(c)
			handedOver[from] = true
			rollout := res.Rollout.Handover != nil && *res.Rollout.Handover == c
			// An upgrade moves MAIN to the pod rolled last before it releases any replica.
			upgradeMove := rollout && f.upgrading() && f.rollsLast(c.To)
			if !slices.Contains(f.mains, from) || !f.retiringD[from] && !(rollout && f.rollsNext(topology.RoleData, from)) && !upgradeMove {
				bad("%s: %s is neither a retiring MAIN nor a MAIN whose pod the rollout replaces next, nor moved to the pod "+
					"an upgrade rolls last (MAINs %v)", cmd, from, f.mains)
			}
			for _, why := range f.notCaughtUp(from, to) {
				bad("%s: %s", cmd, why)
			}
			// The old MAIN is excepted only when it leaves right after: unregistered (retiring)
			// or its pod replaced next by the rollout. A switchover keeps it as a replica.
			except := ""
			if f.retiringD[from] || rollout && f.rollsNext(topology.RoleData, from) {
				except = from
			}
			if older := f.olderAlive(c.To, except); len(older) > 0 {
				bad("%s: a newer MAIN over older replicas %v", cmd, older)
			}
		case planner.UnregisterInstance:
			if !f.retiringD[c.Name] {
				bad("%s: not a retiring member", cmd)
			}
			if _, ok := f.data[c.Name]; !ok {
				bad("%s: not registered", cmd)
			}
			if len(f.mains) == 0 {
				bad("%s: while no MAIN is known (it may be the MAIN Raft records, or the demoted one with the latest writes)", cmd)
			}
			if slices.Contains(f.mains, c.Name) && !handedOver[c.Name] {
				bad("%s: unregisters MAIN %s without handing it over first", cmd, c.Name)
			}
		case planner.RemoveCoordinator:
			name := topology.CoordinatorName(c.ID)
			if !f.retiringC[name] {
				bad("%s: not a retiring member", cmd)
			}
			if f.leaders[name] || len(f.leaders) == 0 {
				bad("%s: leaders %v (Memgraph refuses to remove the leader; with none known any may be it)", cmd, f.leaders)
			}
			if f.halfJoined[name] {
				bad("%s: %s is half-joined (removing it ends the leader process)", cmd, name)
			}
		case planner.YieldLeadership:
			if i != len(res.Commands)-1 {
				bad("%s is not the last command", cmd)
			}
			if !f.retiringC[in.observed.Leader] && !(res.Rollout.Yield && f.rollsNext(topology.RoleCoordinator, in.observed.Leader)) {
				bad("%s: leader %q is neither retiring nor the member whose pod the rollout replaces next", cmd, in.observed.Leader)
			}
		default:
			bad("%s: a command the invariants do not know (%T): extend violations", cmd, cmd)
		}
	}
	if handovers > 1 {
		bad("%d handovers in one plan", handovers)
	}
	out = append(out, f.replicaViolations(res.Replicas)...)
	return append(out, rolloutViolations(f, res)...)
}

// notReadyViolations: on a not-ready leader's view nothing is planned and the StatefulSets are
// held at max(declared, current).
func (f facts) notReadyViolations(res planner.Plan) []string {
	var out []string
	if len(res.Commands) > 0 {
		out = append(out, fmt.Sprintf("%d commands planned on a not-ready leader's view", len(res.Commands)))
	}
	d, cur := f.in.declared, f.in.observed.Span
	if want := (topology.Replicas{Coordinators: max(int32(len(d.Coordinators)), cur.Coordinators),
		DataInstances: max(int32(len(d.DataInstances)), cur.DataInstances)}); res.Replicas != want {
		out = append(out, fmt.Sprintf("replicas %+v on a not-ready leader's view, want them held at %+v", res.Replicas, want))
	}
	return out
}

func isYield(c planner.Command) bool {
	_, ok := c.(planner.YieldLeadership)
	return ok
}

// notCaughtUp says why a handover's targets are not all declared survivors proven up, replicas
// and caught up on every database of the MAIN's lag row.
func (f facts) notCaughtUp(from string, to []string) []string {
	var out []string
	if len(to) == 0 {
		out = append(out, "no target")
	}
	lag := map[string]memgraph.InstanceLag{}
	for _, l := range f.in.observed.Lag {
		lag[l.Instance] = l
	}
	mainLag, ok := lag[from]
	if f.in.observed.Lag == nil || !ok || len(mainLag.Databases) == 0 {
		return append(out, "no replication lag proves anyone caught up with "+from)
	}
	for _, name := range to {
		row, registered := f.data[name]
		_, declared := f.declaredD[name]
		if !declared || !registered || row.Health != memgraph.HealthUp || row.Role != memgraph.RoleReplica {
			out = append(out, fmt.Sprintf("target %s is not a declared, registered, up replica (%+v)", name, row))
			continue
		}
		for db := range mainLag.Databases {
			if l, ok := lag[name].Databases[db]; !ok || l.TxnsBehindMain != 0 {
				out = append(out, fmt.Sprintf("target %s is not proven caught up on %s", name, db))
			}
			if !f.reportedReady(from, name, db) {
				out = append(out, fmt.Sprintf("target %s is not reported ready on %s by MAIN %s's SHOW REPLICAS", name, db, from))
			}
		}
	}
	return out
}

// lagRowOf: SHOW REPLICATION LAG, read in this pass, has a row for one of mains (the MAIN
// answered the leader).
func (f facts) lagRowOf(mains []string) bool {
	for _, l := range f.in.observed.Lag {
		if slices.Contains(mains, l.Instance) {
			return true
		}
	}
	return false
}

// reportedReady: SHOW REPLICAS, read on main in this pass, lists name ready on db. A lag of 0 is
// no proof: it is the MAIN's cached count, kept while a replica that lost its data recovers.
func (f facts) reportedReady(main, name, db string) bool {
	ev := f.in.observed.Replicas
	if ev == nil || ev.Main != main || ev.Problem != "" {
		return false
	}
	for _, r := range ev.Rows {
		if r.Name == name {
			return r.Databases[db].Status == memgraph.ReplicaReady
		}
	}
	return false
}

// olderAlive lists the registered data instances seen up, other than target and except, that
// run an older known Memgraph version than target: a newer MAIN cannot replicate to them.
func (f facts) olderAlive(target, except string) []string {
	versions := map[string]memgraph.Version{}
	if w := f.in.observed.Workloads; w != nil {
		for _, pod := range w.Data.Pods {
			if v, ok := memgraph.ImageVersion(pod.Image); ok {
				versions[topology.DataInstanceName(topology.FirstDataOrdinal+pod.Index)] = v
			}
		}
	}
	mine, known := versions[target]
	var out []string
	for name, row := range f.data {
		v, ok := versions[name]
		if known && ok && name != target && name != except && row.Health == memgraph.HealthUp && v.Compare(mine) < 0 {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// replicaViolations: never below the declared counts or a registered member of ours, never above
// what the declared, current and registered sizes explain.
func (f facts) replicaViolations(got topology.Replicas) []string {
	var out []string
	d, span := f.in.declared, f.in.observed.Span
	needC, needD := int32(len(d.Coordinators)), int32(len(d.DataInstances))
	for name := range f.retiringC {
		if _, present := f.coords[name]; present {
			id, _ := topology.ParseCoordinatorName(name)
			needC = max(needC, int32(id-topology.FirstCoordinatorID+1))
		}
	}
	for name := range f.retiringD {
		if _, registered := f.data[name]; registered {
			n, _ := topology.ParseDataInstanceName(name)
			needD = max(needD, int32(n-topology.FirstDataOrdinal+1))
		}
	}
	if got.Coordinators < needC || got.DataInstances < needD {
		out = append(out, fmt.Sprintf("replicas %d+%d below the declared or still registered %d+%d", got.Coordinators, got.DataInstances, needC, needD))
	}
	if got.Coordinators > max(needC, span.Coordinators) || got.DataInstances > max(needD, span.DataInstances) {
		out = append(out, fmt.Sprintf("replicas %d+%d above what declared, current %d+%d and registered %d+%d explain",
			got.Coordinators, got.DataInstances, span.Coordinators, span.DataInstances, needC, needD))
	}
	return out
}

// handoverTargets is the MAIN a handover demotes and the survivors it may promote.
func handoverTargets(h planner.Handover) (from string, to []string) { return h.From, []string{h.To} }
