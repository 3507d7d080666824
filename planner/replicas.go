package planner

import "github.com/memgraph-hooks/memgraph-hooks/topology"

// permittedReplicas is the replica count per role the hook may return this pass: the declared
// count (growth at once) unless a member of the role's retiring range is still registered, in
// which case the StatefulSet is held at max(declared, span, the size that still contains the
// highest registered retiring member).
func permittedReplicas(d topology.Declared, span topology.Replicas, r retiring) topology.Replicas {
	var needCoordinators, needData int32
	if n := len(r.coordinators); n > 0 {
		needCoordinators = int32(r.coordinators[n-1].ID()-topology.FirstCoordinatorID) + 1
	}
	if n := len(r.data); n > 0 {
		needData = int32(r.data[n-1].Ordinal-topology.FirstDataOrdinal) + 1
	}
	return topology.Replicas{
		Coordinators:  permitted(int32(len(d.Coordinators)), span.Coordinators, needCoordinators),
		DataInstances: permitted(int32(len(d.DataInstances)), span.DataInstances, needData),
	}
}

// permitted: need is 0 when no retiring member is registered.
func permitted(declared, span, need int32) int32 {
	if need == 0 {
		return declared
	}
	return max(declared, span, need)
}

// Hold is the replica count per role to return when the cluster could not be observed: nothing
// is known about registrations, so no StatefulSet shrinks (max of declared and span) while
// growth still goes out at once.
func Hold(d topology.Declared, span topology.Replicas) topology.Replicas {
	return topology.Replicas{
		Coordinators:  max(int32(len(d.Coordinators)), span.Coordinators),
		DataInstances: max(int32(len(d.DataInstances)), span.DataInstances),
	}
}
