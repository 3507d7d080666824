package planner

import (
	"crypto/sha256"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// A pass is one sync request's work on one cluster. The shell gathers what the request shows
// into an Input, then asks Next what to do, performs the step it names — one Read or one Write —
// appends the Result to the pass's record, and asks again, until Next says Done. Next decides
// from the Input and the record alone, so every decision of the pass is here; the shell only
// performs steps (hooks' run loop).

// Step is what a pass does next: a Read, a Write, or Done.
type Step interface{ isStep() }

// ReadKind names what a Read asks for.
type ReadKind int

const (
	// ReadInstances is SHOW INSTANCES on a coordinator.
	ReadInstances ReadKind = iota + 1
	// ReadLag is SHOW REPLICATION LAG on a coordinator (the leader).
	ReadLag
	// ReadReplicas is SHOW REPLICAS on a data instance (the MAIN), with spec.auth's credentials.
	ReadReplicas
	// ReadSettings is SHOW COORDINATOR SETTINGS on a coordinator (the leader).
	ReadSettings
	// ReadCertificate is the certificate a member serves, seen by a TLS handshake of its own.
	ReadCertificate
	// ReadRestoreJob is the state of the cluster's restore job on a data pod's backup agent.
	ReadRestoreJob
)

// Read asks the shell to read one thing, at From: a coordinator's or a data instance's Bolt
// address, or a backup agent's.
type Read struct {
	What ReadKind
	From string
	// Share > 0 gives the read 1/(Share+1) of the budget left, so that one coordinator that does
	// not answer cannot starve the others (leader discovery).
	Share int
	// Grace: the budget ran out in the middle of a handover, which finishes on its own short
	// deadline (HandoverGrace) rather than leave the cluster without a MAIN.
	Grace bool
	// Job names the agent's job (ReadRestoreJob).
	Job string
	// After > 0: the read is made that long after the step is asked for (a settled read, see
	// Input.MainlessSettle); a budget that runs out first fails the read.
	After time.Duration
}

// Write asks the shell to send one write, to To (the leader, a member, or a backup agent).
type Write struct {
	To string
	// Command is one query: a plan's command other than a Handover (whose queries are written
	// one by one), DemoteInstance, ReloadTLS, or StartRestore.
	Command Command
	// Auth: send it with spec.auth's credentials (a data instance's own query).
	Auth  bool
	Grace bool // as Read.Grace
}

// Done ends the pass: the outcome and everything the response and the metrics need from it.
type Done struct {
	cluster  *topology.Cluster
	Outcome  Outcome
	Verdicts Verdicts
	// Children is how the pass's children are rendered.
	Children topology.Rendering
	// Operation is the pass's own status.lastOperation record (nil: it wrote nothing, the prior
	// record stands); the shell stamps its time.
	Operation *v1alpha1.Operation
	// Summary is what the per-cluster gauges show; nil while the cluster hibernates (nothing runs,
	// on purpose: its series are dropped). Lag is SHOW REPLICATION LAG for the replica lag gauge
	// when LagRead (Input.LagDue).
	Summary *ClusterSummary
	Lag     []memgraph.InstanceLag
	LagRead bool
	// ReplicaProblems are the replicas status.replicas shows diverged or stuck, for the replica
	// gauges (nil while the cluster hibernates: its series are dropped); ReplicasRead that the
	// pass asked the MAIN for SHOW REPLICAS because Input.ReplicasDue said so.
	ReplicaProblems []ReplicaProblem
	ReplicasRead    bool
	// Events are the pass's lines for the hook's log, in order; Counts its write queries, by kind
	// and how each step ended.
	Events []Event
	Counts []Count
}

func (Read) isStep()  {}
func (Write) isStep() {}
func (Done) isStep()  {}

// Result is what performing one step gave, in the pass's record in the order performed.
type Result struct {
	Rows     []memgraph.Instance    // ReadInstances
	Lag      []memgraph.InstanceLag // ReadLag
	Replicas []memgraph.Replica     // ReadReplicas
	Settings []memgraph.Setting     // ReadSettings
	Leaf     [sha256.Size]byte      // ReadCertificate: the digest of the leaf served (memgraph.Digest)
	Job      RestoreJob             // ReadRestoreJob, and StartRestore's answer
	// Err is why the read failed or the write was refused (Memgraph's error for a query).
	Err error
	// Problem says why the step could not be sent at all (no credentials, no agent Secret, a
	// connector that cannot); nothing reached Memgraph or the agent.
	Problem string
	// At is when it was performed; Expired that the pass's budget had run out by then.
	At      time.Time
	Expired bool
}

// Input is what a sync request shows, gathered once by the shell before the pass's first step.
type Input struct {
	Cluster *topology.Cluster
	// Declared is Cluster.Declare(Span): every member, declared and retiring.
	Declared topology.Declared
	// Span is each role's retiring range's upper end (the observed StatefulSet's spec.replicas
	// raised to its status.replicas and to one past its highest pod); Returned the observed
	// spec.replicas alone; SetsReconciled whether each StatefulSet controller caught up with its
	// spec, coordinators first.
	Span, Returned topology.Replicas
	SetsReconciled [2]bool
	// Workloads are the rollout's view of the StatefulSets and their pods.
	Workloads *Workloads
	// PodReady is every pod of the cluster by name: Ready and not terminating. PodNodes are the
	// scheduled pods' nodes, Nodes the cluster's Nodes.
	PodReady map[string]bool
	PodNodes map[string]string
	Nodes    []Node
	// ClusterTLSPods are the pods whose memgraph container runs with intra-cluster TLS.
	ClusterTLSPods map[string]bool
	// MainBudgetPod is the pod the observed MAIN's PodDisruptionBudget selects ("" for none).
	MainBudgetPod string
	// Certificate is the certificate rotation's record on the observed StatefulSets; Window the
	// data StatefulSet's hibernation window (spec.ordinals.start; nil for none).
	Certificate topology.CertificateRecord
	Window      *int32
	// TLS is what spec.tls gives the pass.
	TLS TLSInput
	// RestoreSource names spec.bootstrap.fromBackup's backup, or why it cannot be restored;
	// zero when the spec restores nothing.
	RestoreSource RestoreSource
	// Problems are why pods cannot start; MissingSecrets the Secrets the spec names that do not
	// exist.
	Problems       []topology.PodProblem
	MissingSecrets []topology.MissingSecret
	DryRun         bool
	Now            time.Time
	// ProjectionGrace is how long the kubelet may take to project a Secret's new content.
	ProjectionGrace time.Duration
	// CanProbe: the shell can see which certificate a member serves (ReadCertificate).
	CanProbe bool
	// LagDue: the replica lag gauge is due for a new read this pass.
	LagDue bool
	// BudgetGone: the budget ran out before the pass could take its cluster's lock.
	BudgetGone bool
	// MainlessSettle is the pause between the two reads a step that makes a MAIN for a cluster
	// without one is made on (readTableSettled); 0 reads once.
	MainlessSettle time.Duration
	// ReplicasDue: status.replicas is due for a new SHOW REPLICAS on the MAIN this pass (the
	// pass reads it anyway when a catch-up proof needs it).
	ReplicasDue bool
	// Agent is the backup agent's pin the data pods' template carries in this pass
	// (NextAgentPin), rendered as Rendering.Agent.
	Agent topology.AgentPin
}

// TLSInput is what spec.tls's Secrets give a pass.
type TLSInput struct {
	// Problem says why no Bolt connection can be made as spec.tls asks ("": it can).
	Problem string
	// Enabled: the members serve Bolt over TLS; Leaf is the digest of the Secret's tls.crt leaf
	// and Stamp the digest of its content (topology.CertificateStamp).
	Enabled bool
	Leaf    [sha256.Size]byte
	Stamp   string
	// ClusterProblem is what is wrong with the intra-cluster TLS Secret ("" when nothing is).
	ClusterProblem string
}

// RestoreSource is spec.bootstrap.fromBackup's backup as the request shows it.
type RestoreSource struct {
	Label   string // "MemgraphBackup <name>" or the object's s3:// URI
	Problem string // why it cannot be restored yet
}

// Next decides a pass's next step from what the request shows (in) and everything the pass has
// read and written so far (done, in the order performed). It is deterministic: the same input
// and record give the same step. See pass for the stages, in order.
func Next(in *Input, done []Result) Step {
	p := newPass(in, done)
	if p.run() == waiting {
		return p.pending
	}
	return p.finish()
}
