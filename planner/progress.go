package planner

// Progress is what the status conditions need to know about a plan. All name lists are sorted
// by ordinal (data instances) or id (coordinators), so the status they feed is deterministic.
type Progress struct {
	Leader string // the observed leader (coordinator_<id>)
	Main   string // the data instance observed as MAIN, "" when no row reports one

	// LeaderNotReady: the leader has not finished reconciling (just elected, or running FORCE
	// RESET); nothing was planned and the StatefulSets are held.
	LeaderNotReady bool

	// PendingCoordinators and PendingDataInstances are declared members not registered yet; the
	// plan registers them.
	PendingCoordinators  []string
	PendingDataInstances []string
	// RegistrationHeld says why pending data instances are not registered: no MAIN is alive,
	// and a new, empty instance would be the only failover candidate ("" when none is held).
	RegistrationHeld string

	// ForceReset: no MAIN while a retiring instance is still registered, so the plan lets
	// Memgraph fail over to the most up-to-date replica (FORCE RESET CLUSTER STATE) rather
	// than promote by ordinal.
	ForceReset bool
	// Promote is the instance the plan sets to MAIN because the observation proves there is none.
	Promote string
	// PromotionWaits says why no MAIN is set although the observation proves there is none: every
	// candidate runs a newer Memgraph version than another alive instance, and a newer MAIN cannot
	// replicate to an older replica.
	PromotionWaits string
	// MainUnproven names the registered data instances that are not seen alive while no row
	// reports a MAIN: Raft may still record one of them as MAIN (its row then reads
	// down/unknown), and Memgraph refuses a second MAIN even beside a dead one, so the plan
	// promotes nobody and leaves failover to the coordinators.
	MainUnproven []string

	// RetiringCoordinators and RetiringDataInstances are the members of the retiring ranges
	// still registered: while any is listed, that role's StatefulSet is held at its size.
	RetiringCoordinators  []string
	RetiringDataInstances []string
	// RetiringMaybeMain are retiring data instances left registered because no row reports a
	// MAIN — a dead one may be the Raft MAIN (see MainUnproven), a live one the MAIN an
	// interrupted handover demoted — or because their own row reports main beside another one.
	RetiringMaybeMain []string

	// HandoverFrom is the retiring MAIN the plan demotes; HandoverTo the caught-up survivor it
	// promotes.
	HandoverFrom string
	HandoverTo   string
	// Switchover: the handover planned moves MAIN to the preferred MAIN (spec.preferredMain),
	// not off a retiring instance.
	Switchover bool
	// SwitchoverPending says why MAIN is not handed over to the preferred MAIN yet ("" when it
	// is MAIN, the plan hands it over, or none is declared): it is not registered, not up, not
	// a replica, or behind the MAIN on a database (by how much).
	SwitchoverPending string
	// NoCaughtUpSurvivor says why a retiring MAIN cannot be handed over ("" when it can or none
	// retires). Nothing is demoted and the MAIN stays registered.
	NoCaughtUpSurvivor string

	// YieldPending: the leader is retiring and the plan ends with YIELD LEADERSHIP.
	YieldPending bool
	// LeaderUnknown: retiring coordinators are registered but no leader is known, so none is
	// removed (REMOVE COORDINATOR of the leader is refused).
	LeaderUnknown bool
	// HalfJoined lists coordinators that are Raft members without a bolt_server, other than the
	// leader itself: ADD COORDINATOR timed out for them and the join completed later. The plan
	// never adds (refused) nor removes them (REMOVE COORDINATOR of one stops the leader
	// process); a retiring one holds the coordinators' StatefulSet at its size.
	HalfJoined []string

	// AddressUpdates are registered declared members whose bolt_server is not the one they are
	// to be advertised at; the plan updates each in place (UPDATE CONFIG).
	AddressUpdates []AddressUpdate

	// Rebuild is what the plan does about the rebuild the memgraph.com/rebuild annotation asks
	// for (planRebuild); zero without the annotation.
	Rebuild RebuildStep

	// Drift lists registered declared members whose registration carries other addresses than
	// the declared ones besides the bolt_server. The plan does not rewrite them (see the package
	// doc).
	Drift []Drift
}

// Drift is one address of a registered member that differs from its declared identity.
type Drift struct {
	Name     string // coordinator_<id> or instance_<n>
	Field    string // bolt_server, coordinator_server or management_server
	Observed string
	Declared string
}
