// Package planner diffs the declared topology against what the leader coordinator reports and
// returns the Bolt commands that converge the cluster, plus the StatefulSet replica counts the
// hook may return this pass. It is pure: no I/O, no clock, no randomness. Commands are plain
// values; the hook's executor runs them in order on the leader, stopping at the first one that
// does not succeed.
//
// # Registration
//
//   - A coordinator is registered when SHOW INSTANCES lists it with a non-empty bolt_server; a
//     coordinator that was never ADDed (a fresh one, leader of itself) lists itself with an
//     empty one. Every declared coordinator that is not registered gets ADD COORDINATOR with
//     exactly its declared identity — including the one we are connected to, whose declared
//     identity is its own --coordinator-hostname and ports (Memgraph compares them as strings).
//   - A coordinator row with an empty bolt_server other than the leader's own is half-joined:
//     its ADD COORDINATOR timed out ("reached a timeout!") and NuRaft completed the join later,
//     so it is a voting Raft member that the leader's application log does not hold (Memgraph
//     v3.12.0 src/coordination/raft_state.cpp 520–531, coordinator_instance.cpp 930–939 and
//     1001–1008). ADD is refused for it (KindIDExists, which JudgeRecheck therefore counts as
//     done only for a registered member) and REMOVE COORDINATOR of it makes the leader process
//     exit, so no command ever targets it; Progress.HalfJoined reports it. It heals only if it
//     becomes the leader: the leader's own empty row is ADDed like any unregistered declared
//     member.
//   - Every declared data instance SHOW INSTANCES does not list gets REGISTER INSTANCE, with
//     its declared mode (AS ASYNC, AS STRICT_SYNC; none for Sync).
//     A registration lost later (wiped volume) is re-issued by the same diff. Beside a MAIN row,
//     only once that MAIN answered the leader's SHOW REPLICATION LAG in this pass: beside a dead
//     MAIN for which Memgraph found no failover candidate, a new, empty instance would be the
//     only one, and the cluster would follow it (Progress.RegistrationHeld).
//   - SET INSTANCE TO MAIN is planned only when the observation proves Raft records no MAIN: no
//     row reports role main AND every registered data instance is up and a replica. The leader
//     shows a dead MAIN as down/unknown, exactly like a dead replica, and Memgraph refuses a
//     second MAIN even beside a dead one; so while any registered instance's role is unknown the
//     plan promotes nobody (Progress.MainUnproven) and failover stays with the coordinators. The
//     target is the lowest-ordinal declared instance observed up, else the first declared one
//     (then no declared instance is registered yet; this plan registers it first, and a newly
//     registered instance starts alive). An existing MAIN is never overridden. When a member of
//     the data retiring range is still registered, though, no MAIN means a shrink lost its MAIN
//     mid-handover (or a human demoted it): whoever holds the latest writes must win, which only
//     Memgraph can tell while no MAIN exists, so the plan runs FORCE RESET CLUSTER STATE (the
//     leader fails over to the most up-to-date alive replica) instead of choosing by ordinal.
//     FORCE RESET does not return before the leader's reconciliation succeeds or its leadership
//     is lost, so it runs under its own deadline; JudgeStep reads a deadline hit as in progress
//     and "not leader anymore" as a leadership change, neither as a failure.
//   - Instances outside the declared and retiring sets (e.g. one a human registered) are never
//     the target of any command; they still count when deciding whether a MAIN exists.
//   - Converged clusters get no commands.
//   - A leader that is not ready (it reports its own health unknown: just elected, or running a
//     FORCE RESET) answers its local Raft copy with every health unknown and refuses every write
//     ("leader couldn't be found"). Such a view is no evidence about any instance: Decide plans
//     nothing on it and holds the StatefulSets (Progress.LeaderNotReady); ReadLeadership lets the
//     hook treat it as "no leader yet".
//
// # Advertised addresses and drift
//
// A member's bolt_server is only what SHOW INSTANCES reports and what the coordinators hand
// routing clients (Memgraph v3.12.0 coordination/utils.hpp CreateRoutingTable); management,
// replication and Raft use the other endpoints, and the hook dials the in-cluster names. Each
// declared member is registered at topology.Member.AdvertisedBoltServer — its external address
// (spec.externalAccess) once Kubernetes assigned one, else its in-cluster name — and a registered
// member whose bolt_server alone differs gets UPDATE CONFIG, in place (Progress.AddressUpdates):
// Memgraph only appends the change to Raft (coordinator_instance.cpp 1677–1757), live, for any
// role, so an address that changes never unregisters anything.
//
// A registered declared member whose other reported addresses differ from its declared identity
// is reported (Progress.Drift) and not rewritten, its bolt_server neither. Any other endpoint
// needs UNREGISTER+REGISTER or REMOVE+ADD COORDINATOR, which Memgraph refuses for the alive MAIN
// and the leader and which, for a coordinator, is a Raft membership change. Our identities derive
// from admission-checked, immutable inputs (names, namespace, clusterDomain, ports that extraArgs
// may not override), so such a registration was made by someone else; destroying a live member
// to "fix" it is not the planner's call.
//
// # Retirement
//
//   - A role's retiring range is [declared, current) (topology.Declare) widened by every
//     registered member that carries exactly our identity (coordinator_server, resp.
//     management_server) for an ordinal at or above the declared count; see "Stale views".
//     Only registered members of the range get commands; one already gone needs nothing.
//   - Data: when the observed MAIN is retiring, one Handover command demotes it and promotes the
//     lowest-ordinal declared survivor that is up, a replica, and proven caught up on every
//     database of the MAIN by SHOW REPLICATION LAG (0 behind) and by the MAIN's own SHOW
//     REPLICAS (ready) read in the same pass — the lag is the MAIN's cached count and reads 0
//     for a replica that lost its data and recovers (Observed.Replicas); missing rows or databases
//     prove nothing — and no newer than another alive instance (versions.go),
//     then checks that the survivor serves as MAIN (see Handover: Memgraph accepts SET INSTANCE
//     TO MAIN for an unreachable target and fails over later, maybe back). With no such survivor
//     nothing is demoted, Progress.NoCaughtUpSurvivor says why, and the MAIN stays registered.
//     Then UNREGISTER INSTANCE each retiring member — never a MAIN: the old MAIN only behind its
//     Handover in the same plan (which runs only if the handover is proven), and while no row
//     reports a MAIN none at all: a dead one may be the MAIN Raft records, a live one the MAIN
//     an interrupted handover demoted (Progress.RetiringMaybeMain lists them). Whatever the
//     coordinators did meanwhile (a failover back to the retiring instance included), the next
//     pass plans from what it sees.
//   - Coordinators: REMOVE COORDINATOR each retiring member that is neither the leader (nor
//     reported as one; none at all while no leader is known) nor half-joined. A half-joined
//     retiring member stays a member, so it holds the StatefulSet at its size until a human
//     intervenes (or it becomes the leader: see below). When the leader we are connected to is
//     retiring, YIELD LEADERSHIP is the last command — preceded by ADD COORDINATOR of itself if
//     its row has no bolt_server, so that a later pass can remove it: Raft picks the successor,
//     so the pass ends there and the next one re-observes (and yields again if another retiring
//     member won).
//     Declared counts are odd (admission), so a shrink retires an even number and the surviving
//     membership is odd; removals go one at a time, as Raft requires.
//   - Replicas: per role, the declared count unless a member of the retiring range is still
//     registered, then max(declared, current, size holding the highest such member). Growth is
//     returned immediately; a StatefulSet never sheds a pod whose member is still registered,
//     because the count only drops in a pass that observed the whole range unregistered.
//
// # Order
//
// ADD COORDINATOR…, REGISTER INSTANCE…, UPDATE CONFIG…, SET MAIN (if provably none), handover (a retirement's
// or a switchover's, never both), UNREGISTER…,
// REMOVE COORDINATOR…, ADD COORDINATOR of a retiring leader never ADDed, YIELD LEADERSHIP. Registering first matters: a declared coordinator that
// lost its membership is re-added before retiring ones are removed, so Raft membership never
// dips below the surviving size (removing first could leave e.g. two members, where one failure
// blocks every commit including the re-add; a failed ADD stops the pass before any removal).
// New data instances are registered before any handover, but are never handover candidates in
// the pass that registers them (they have no lag row yet). Data retirement and non-leader
// removals precede the yield because after the yield this connection no longer leads.
//
// # Rolling upgrades
//
// Versions (versions.go, rollout_versions.go): a pod's Memgraph version is its image tag when the
// tag is one. No command makes a MAIN newer than another registered, alive data instance (a newer
// MAIN cannot replicate to an older replica), the departing old MAIN of a handover excepted; an
// upgrade rolls the MAIN's pod last; a downgrade without memgraph.com/allow-downgrade and a change
// across 3.9 are not rolled (DowngradeRefused, UpgradeNeedsMigration).
//
// A change of a role's pod template rolls its pods one at a time through the StatefulSet's
// rollingUpdate.partition, which PlanRollout decides on every pass (and Decide includes when
// Observed.Workloads is set): data instances, then coordinators, each highest index first; the
// next pod only once every pod replaced so far is Ready, registered, up and caught up and the
// rest of the cluster is whole; MAIN handed over (the same Handover as a retirement, re-planned
// by Precondition like any other) and leadership yielded before their pods; nothing released
// while a role retires members; stuck judged from a pod's own creationTimestamp. The pod
// revisions, not the spec, say what is out of date, so hand edits and rollbacks roll alike.
// rollout.go states the invariants.
//
// # Stale views
//
// Observed.Current comes from Metacontroller's informer cache and may lag behind what the hook
// last returned; everything else is read live from the leader. The output stays safe:
//
//   - Stale-high (the cache still shows a size we already shrank from): the extra ordinals fall
//     into the retiring range, but we only shrank after observing all of them unregistered, and
//     the planner never registers a retiring member, so they are still unregistered: the plan is
//     empty and returns the declared count. No re-grow.
//   - Stale-low (the cache has not seen a growth yet, and the spec shrank again meanwhile — the
//     hazard the seed operator's expectations guard covers): [declared, current) undercounts the
//     retiring members. The widened range catches every member registered under our identity
//     above the declared count, so they are retired and the count is held at the size that still
//     contains them. No shrink past a registered member. Members of the grown range that never
//     got registered may be shed; that loses nothing.
//   - Metacontroller's default apply also rejects a write computed from a stale object (the
//     update carries the cached resourceVersion), so the planner's guard is the second line.
//
// Hold covers the pass that could observe nothing: it never shrinks below current. It cannot
// see registrations, so its guard is only as good as Current; the hook should derive Current
// from the largest evidence it has (spec.replicas, status.replicas, the highest pod ordinal).
//
// # Day-2 operations
//
//   - Planned switchover (Declared.PreferredMain, switchover.go): when another instance is MAIN
//     the plan hands MAIN over to the preferred one with the retirement's own Handover, lag-gated
//     the same way, one handover per pass (a retirement's first); until the preferred instance
//     is registered, up, a replica and caught up, nothing is demoted and
//     Progress.SwitchoverPending says how far it is. With no MAIN, the election targets it; a
//     retiring MAIN goes to it when it is a caught-up survivor.
//   - Pause (Outcome.Paused): the hook returns the children as observed (topology.FrozenChild),
//     reads one SHOW INSTANCES for the status and writes nothing; Verdict keeps a Converged that
//     holds and otherwise says that the cluster is paused and what would be done.
//   - Hibernation (PlanHibernation, hibernation.go): the data replicas, then the MAIN, then the
//     coordinators go to 0 without a Bolt write; waking starts the MAIN and the coordinators
//     before the replicas. When it is in charge, the pass neither plans nor executes.
//   - With rollouts: one MAIN handover per pass (a retirement's, else a switchover's, else the
//     rollout's, which a switchover defers to the next pass); the rollout hands MAIN to the
//     preferred instance when it is a caught-up survivor already updated (handoverTarget), and a
//     switchover waits while the preferred instance's pod awaits replacement (awaitsReplacement),
//     so neither undoes the other. Hibernation does not begin during a rollout
//     (HibernationInput.RolloutPending); while it is in charge, HibernationRollout replaces no
//     running pod and lets stopped pods start at the declared template.
//   - What was written (LastOperation): the executor's writes (Writes of each step attempted),
//     how they ended and Memgraph's message; a pass that writes nothing leaves the prior record.
//
// # The pass around the plan
//
// Every other decision of a sync pass is made here too, as a pure function the hook calls
// between its reads and its writes; the hook (package hooks) decides nothing itself.
//
//   - Which answer is the view (Discover): the coordinators are asked in DiscoveryOrder and the
//     first view of an established cluster naming a ready leader is chosen. A view naming no
//     leader (a stale state machine) or a not-ready leader (its local Raft copy) never is. A
//     fresh coordinator's self-view bootstraps the cluster only when every coordinator answered
//     and every one is fresh, because a wiped coordinator looks exactly like a fresh one and
//     bootstrapping it beside the real cluster would start a second one with a second MAIN.
//   - Whether the view settles the pass (Settled): a plan with nothing to do, no handover due and,
//     when the view is a follower's, no StatefulSet shrinking and no rollout in progress (a
//     pod's release rests on the leader's table) ends the pass on that one query;
//     otherwise the hook reads the leader's own table (LeaderOf, CheckLeaderView), plans again on
//     it, reading SHOW REPLICATION LAG and the MAIN's SHOW REPLICAS (CatchUpSource) only when
//     NeedsCatchUpReads says so, and executes there.
//   - What to check right before a step (PreconditionReads, Precondition): SET INSTANCE TO MAIN,
//     FORCE RESET, UNREGISTER, REMOVE COORDINATOR and a handover are skipped when the cluster
//     moved since the plan was read (a MAIN elected, a retiree failed over to or elected; for an
//     UNREGISTER also no MAIN at all: another writer may be mid-handover and the instance its
//     demoted MAIN); a handover runs only if re-planning on fresh rows and lag yields the very
//     same handover.
//   - What a step's error means (JudgeStep, JudgeRecheck): done by a concurrent writer (by error
//     kind, never by message text; KindIDExists is done only once SHOW INSTANCES shows the
//     coordinator registered, else it is half-joined), in progress (FORCE RESET past its own
//     deadline), the leader moved (a Raft write refused while it yields or lost its majority
//     included: "not yet", re-observed), or failed. Any verdict but done ends the pass.
//   - A handover's own steps (Handover): whether a refused SET restores the old MAIN
//     (RestoreAfter: only when the refusal proves no MAIN was set), and when the new MAIN is
//     proven to serve (UnprovenByInstances, UnprovenByLag).
//   - What the status says (Verdict): the pass's stage results (Outcome) ranked into Ready and
//     Converged with a reason, a message and a resync delay, and Updated from the rollout's step.
//     What the steps changed is judged on the table read after them (Outcome.Progress), what the plan
//     set out to do on the plan.
//
// Coordinator settings (PlanSettings) are planned apart from Decide, on SHOW COORDINATOR SETTINGS,
// which the hook reads only when the spec declares a setting: a SET COORDINATOR SETTING for each
// declared setting the leader shows otherwise; an undeclared one is never touched.
//
// Commands are values (Command, with a Kind for metrics); the hook's executor only maps each to
// its Bolt call.
package planner
