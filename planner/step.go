package planner

import (
	"errors"
	"slices"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// StepVerdict is what a failed step means for the rest of the pass. Every later step was
// planned on the assumption that this one succeeded, so any verdict but StepDone ends the pass.
type StepVerdict int

const (
	// StepFailed: report Memgraph's message; the next pass re-observes and plans again.
	StepFailed StepVerdict = iota
	// StepDone: the refusal says the step's goal already holds (a concurrent writer — another
	// hook replica — registered the same member or elected a MAIN first). Carry on.
	StepDone
	// StepInProgress: FORCE RESET CLUSTER STATE did not answer within its own deadline; the
	// leader keeps reconciling and is not ready meanwhile. Re-observe soon; nothing failed.
	StepInProgress
	// StepLeaderMoved: the coordinator the pass writes to no longer leads, leads but is not
	// ready (after an election or during a FORCE RESET: "leader couldn't be found"), or cannot
	// commit to Raft right now ("Writing to Raft log failed": it is yielding leadership, which
	// refuses every Raft write until the transfer ends and may re-elect it, or it lost its
	// majority and steps down within the leadership expiry). Leader discovery on the next pass
	// finds the current leader; nothing failed.
	StepLeaderMoved
	// StepRecheck: the refusal alone does not tell; read SHOW INSTANCES on the leader and ask
	// JudgeRecheck.
	StepRecheck
)

// JudgeStep classifies the error a command returned (never nil). A failed handover is always a
// failure: its error tells what happened to the MAIN, which the status must show; so is an ADD
// already judged half-joined (JudgeRecheck).
func JudgeStep(cmd Command, err error) StepVerdict {
	var handover *HandoverError
	var halfJoined *HalfJoinedError
	if errors.As(err, &handover) || errors.As(err, &halfJoined) {
		return StepFailed
	}
	var mgErr *memgraph.Error
	if !errors.As(err, &mgErr) {
		return StepFailed
	}
	switch mgErr.Kind {
	case memgraph.KindNotLeader, memgraph.KindNoLeader, memgraph.KindForwardFailed:
		// Writes go to the coordinator that reported itself leader: a forwarding failure means it
		// is a follower now, and the real reason is on the new leader.
		return StepLeaderMoved
	case memgraph.KindRaftWrite:
		// A YIELD LEADERSHIP in progress (NuRaft v2.1.0 raft_server.cxx 1169–1264 refuses writes
		// while it transfers, and resigns after ~4 s without a peer, maybe to be re-elected) or a
		// lost majority: not yet, not a failure of the step.
		return StepLeaderMoved
	case memgraph.KindTimeout:
		if _, ok := cmd.(ForceResetClusterState); ok {
			return StepInProgress
		}
	case memgraph.KindMainExists:
		if _, ok := cmd.(SetInstanceToMain); ok {
			return StepDone
		}
	case memgraph.KindNoSuchInstance:
		// A rebuild's goal is its instance unregistered: another writer did it first.
		if u, ok := cmd.(UnregisterInstance); ok && u.Rebuild {
			return StepDone
		}
	case memgraph.KindNameExists:
		// A member registered under the same name is the goal; a conflict on an endpoint
		// registered under another name (KindAlreadyExists) is not.
		if _, ok := cmd.(RegisterInstance); ok {
			return StepDone
		}
	case memgraph.KindIDExists:
		// The goal only if the member is registered, not half-joined: SHOW INSTANCES tells.
		if _, ok := cmd.(AddCoordinator); ok {
			return StepRecheck
		}
	}
	return StepFailed
}

// JudgeRecheck decides a StepRecheck from SHOW INSTANCES read on the leader right after the
// refusal (readErr: that read failed) and returns the error to report for a failure. An ADD
// COORDINATOR refused with "such id already exists" is done when the coordinator is registered
// (another hook replica added it), and a *HalfJoinedError when it is listed without a
// bolt_server; a failed read or a missing row leaves the refusal as it is.
func JudgeRecheck(cmd Command, refusal error, rows []memgraph.Instance, readErr error) (StepVerdict, error) {
	add, ok := cmd.(AddCoordinator)
	if !ok || readErr != nil {
		return StepFailed, refusal
	}
	name := topology.CoordinatorName(add.ID)
	for _, r := range rows {
		if r.IsCoordinator() && r.Name == name {
			if r.Registered() {
				return StepDone, nil
			}
			return StepFailed, &HalfJoinedError{Coordinator: name, Err: refusal}
		}
	}
	return StepFailed, refusal
}

// stepReads says what the pass reads on the leader right before a step, for Precondition.
type stepReads int

const (
	readNothing stepReads = iota
	readTable
	// readTableAndCatchUp: SHOW INSTANCES, then (when it answered) SHOW REPLICATION LAG and the
	// MAIN's SHOW REPLICAS.
	readTableAndCatchUp
	// readTableSettled: SHOW INSTANCES, and when Precondition lets the step run on it, SHOW
	// INSTANCES again after a pause (Input.MainlessSettle), for Precondition to judge once more:
	// a step that makes a MAIN for a cluster without one must not run while another writer (a
	// second hook replica) is between the DEMOTE and the SET of its handover, which a single read
	// may fall into.
	readTableSettled
)

// preconditionReads names the reads Precondition needs before cmd, after the steps ran already
// in the same pass. Only the steps Memgraph refuses outright once the cluster moved since the
// plan was read (another hook replica elected a MAIN; the coordinators failed over to, or
// elected, the member being retired) are re-checked; the read costs one query (two for a
// handover) and precedes only these rare steps. A MAIN is made only on two reads a pause apart
// (readTableSettled), unless the pass itself just registered a data instance (a new cluster's
// first election, or one whose registrations a budget cut short): a handover needs every member
// it moves MAIN between registered, so another writer's is not halfway through while members
// are still being registered.
func preconditionReads(cmd Command, ran []Command) stepReads {
	switch c := cmd.(type) {
	case Handover:
		return readTableAndCatchUp
	case SetInstanceToMain:
		if registeredData(ran) {
			return readTable
		}
		return readTableSettled
	case ForceResetClusterState:
		return readTableSettled
	case UnregisterInstance:
		if c.Rebuild {
			return readTableAndCatchUp
		}
		return readTable
	case RemoveCoordinator:
		return readTable
	}
	return readNothing
}

// registeredData says whether the steps ran include the registration of a data instance.
func registeredData(ran []Command) bool {
	return slices.ContainsFunc(ran, func(c Command) bool {
		_, ok := c.(RegisterInstance)
		return ok
	})
}

// Fresh is what the pass read on the leader right before a step (preconditionReads).
type Fresh struct {
	Instances    []memgraph.Instance
	InstancesErr error
	Lag          []memgraph.InstanceLag
	LagErr       error
	// Replicas is SHOW REPLICAS on the MAIN of Instances (ReplicasSource of them).
	Replicas *MainReplicas
}

// Precondition says why cmd must be skipped on the cluster as it is now (f, read right before
// the step), or "" to run it. span and w are the spans and the workloads the plan
// was made with.
//
// A failed SHOW INSTANCES proves nothing: the step runs and its own error says why. A MAIN
// handover is re-planned from the fresh rows and lag: it runs only if the same handover (same
// MAIN, same caught-up target) is still what Decide would do, so a survivor that fell behind since
// the plan was read is never promoted; without a lag read there is no such proof.
func Precondition(d topology.Declared, span topology.Replicas, w *Workloads, cmd Command, f Fresh) string {
	if f.InstancesErr != nil {
		return ""
	}
	o := Observe(f.Instances, f.Lag, span)
	o.Replicas = f.Replicas
	o.Workloads = w // a rollout's handover is re-planned like a retirement's
	v := index(o)
	switch c := cmd.(type) {
	case Handover:
		if f.LagErr != nil {
			return "SHOW REPLICATION LAG failed right before the handover: " + Explain(f.LagErr)
		}
		for _, again := range Decide(d, o).Commands {
			if again == Command(c) {
				return ""
			}
		}
		return "the cluster changed since the handover was planned; planning again next pass"
	case SetInstanceToMain, ForceResetClusterState:
		if main := observeMain(v).name; main != "" {
			return main + " is MAIN already"
		}
	case UnregisterInstance:
		switch {
		case c.Rebuild:
			return rebuildStillDue(d, o, c)
		case v.data[c.Name].Role == memgraph.RoleMain:
			return c.Name + " became MAIN"
		case observeMain(v).name == "":
			// Decide never unregisters while no row reports a MAIN, and neither may a step planned
			// before the MAIN went: another writer (a second hook replica, a human) may be
			// between the DEMOTE and the SET of a handover, and c.Name the demoted MAIN holding
			// the latest writes, which its restore needs registered.
			return "no instance is MAIN; " + c.Name + " may hold the latest writes"
		}
	case RemoveCoordinator:
		if name := topology.CoordinatorName(c.ID); v.coordinators[name].Role == memgraph.RoleLeader {
			return name + " became leader"
		}
	}
	return ""
}

// rebuildStillDue is "" when Decide, on the fresh read, still unregisters the rebuild's instance
// (its MAIN, its Sync copies and the catch-up proofs as they are now), else why not.
func rebuildStillDue(d topology.Declared, o Observed, c UnregisterInstance) string {
	if o.Lag == nil {
		return "SHOW REPLICATION LAG could not be read right before the rebuild's UNREGISTER"
	}
	plan := Decide(d, o)
	for _, again := range plan.Commands {
		if again == Command(c) {
			return ""
		}
	}
	if msg := plan.Progress.Rebuild.Message; msg != "" {
		return msg
	}
	return "the cluster changed since the rebuild's UNREGISTER was planned; planning again next pass"
}
