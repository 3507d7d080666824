package planner

import "github.com/memgraph-hooks/memgraph-hooks/topology"

// ReadDrain completes in with what the leader's table o says: the MAIN (the row reporting role
// main), the Raft leader, and the data instances proven able to take MAIN over — the same proofs
// as every handover (caughtUpSurvivors: registered, up, a replica, 0 behind in SHOW REPLICATION
// LAG and ready in the MAIN's SHOW REPLICAS on every database, no older than any other). Without
// the catch-up reads in o (Lag, Replicas) no instance is proven caught up.
func ReadDrain(d topology.Declared, in DrainInput, o Observed) DrainInput {
	v := index(o)
	in.Main, in.Leader, in.CaughtUp = observeMain(v).name, o.Leader, map[string]bool{}
	if in.Main == "" || o.Lag == nil {
		return in
	}
	candidates, _ := caughtUpSurvivors(d, v, in.Main)
	for _, name := range candidates {
		in.CaughtUp[name] = true
	}
	return in
}

// DrainPrecondition says why the drain's handover h must be skipped on the cluster as it is now
// (f, read on the leader right before the step), or "" to run it: it runs only if PlanDrain,
// planned again on the fresh rows and catch-up reads, still hands MAIN over from the same MAIN
// to the same target, so that a target that fell behind since the plan was read is never
// promoted. A failed SHOW INSTANCES proves nothing: the step runs and its own error says why.
func DrainPrecondition(d topology.Declared, in DrainInput, h Handover, f Fresh) string {
	switch {
	case f.InstancesErr != nil:
		return ""
	case f.LagErr != nil:
		return "SHOW REPLICATION LAG failed right before the handover: " + Explain(f.LagErr)
	}
	o := Observe(f.Instances, f.Lag, topology.Replicas{})
	o.Replicas = f.Replicas
	if step := PlanDrain(ReadDrain(d, in, o)); step.Verdict == DrainAct && step.Command == Command(h) {
		return ""
	}
	return "the cluster changed since the drain's handover was planned; planning again next pass"
}
