// Package planner decides everything a sync pass does: what to read, what to write, and what
// the status says, from the declared topology and what the pass observed. It is pure: no I/O,
// no clock, no randomness; the hook performs what it decides.
//
// The entry point is Next: from the request's Input and the results of the steps performed so
// far, it returns the pass's next step — a Read, a Write (one query), or Done with the outcome,
// its verdicts and how to render the children. A Read or a Write performs itself through the
// calls the hook provides (Effects, perform.go) and states how it runs in the budget (Timing).
// Next replays the pass from its start each time
// (replay.go), through its stages in order (stages.go):
//
//	hibernation → gates (spec.tls, pods not Ready) → discovery → restore
//	→ rollout while pods are down → plan (Decide; on the leader, executed: execute.go)
//	→ drain → settings → rotation → status.replicas → the replica lag gauge
//
// A stage that cannot go on ends the pass. Each thing is read at most once per view: a write,
// or the re-check right before a guarded step, starts a new one. A MemgraphBackup's pass
// (NextBackup) chooses the instance it is taken on with the same reads, one a step of its own.
//
// Where to look, by concern:
//
//   - the plan on one view: plan.go (Decide), registration.go, promotion.go, retirement.go,
//     handover.go, switchover.go, replicas.go, observed.go (Observed, the row index)
//   - which view, and the leader's table: discovery.go, leadership.go, views.go
//   - a step's checks and errors: step.go (Precondition, JudgeStep), errors.go, journal.go
//   - rolling upgrades: rollout*.go, versions.go; day-2: hibernation.go, drain*.go,
//     settings.go, rotation.go, restore.go
//   - the status: verdict.go (Verdict), status.go, health.go, placement.go, progress.go
//   - backups: backup*.go, schedule.go
//
// The rules each plan follows, and the Memgraph behaviour behind each, are in docs/planner.md;
// the words (pass, view, hold, settles, …) in docs/architecture.md's glossary.
package planner
