package planner

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// Certificate rotation: when the spec.tls Secret's content changes, every instance must serve
// and trust it. Memgraph re-reads its files on RELOAD … TLS without a restart, but only the files
// the kubelet has projected, which it does within its sync period and Secret cache TTL (about a
// minute each by default) of the change. So the hook reloads an instance seen serving another
// certificate than the Secret's as soon as it sees one, one instance at a time, each proven by a
// new handshake before the next; and once ProjectionGrace has passed since it first saw the
// Secret's content it reloads every instance once more, for what a handshake cannot show (a new
// ca.crt), and records the content as reloaded. An instance that refuses the reload, or still
// serves another certificate after that last round, is rolled instead (RotationRestart).

// ProjectionGrace is how long after a Secret's content is first seen the hook counts on the
// kubelet to have projected it into every pod: its default sync period (1 m) plus its Secret
// cache TTL (1 m).
const ProjectionGrace = 2 * time.Minute

// KindReloadTLS counts the reload queries (memgraph_hooks_commands_total).
const KindReloadTLS CommandKind = "RELOAD TLS"

// RotationAction is what the rotation stage does next.
type RotationAction string

const (
	// RotationNone: nothing to do: every instance serves the Secret's certificate and the
	// content is recorded as reloaded (or records it now: RotationStep.Record).
	RotationNone RotationAction = ""
	// RotationReload: send the reload queries to Member, then prove it.
	RotationReload RotationAction = "reload"
	// RotationWait: the kubelet may not have projected the Secret's files yet; the next pass
	// looks again.
	RotationWait RotationAction = "wait"
	// RotationRestart: an instance refused the reload, or still served another certificate after
	// the grace, so the pods are rolled (a pod starts with the files as they are); the
	// StatefulSets carry Stamp (topology.AnnotationCertificateRestart).
	RotationRestart RotationAction = "restart"
)

// ServedCertificate is what one instance serves: the digest of its leaf (memgraph.Digest), or why
// it could not be seen.
type ServedCertificate struct {
	Member  string
	Leaf    [sha256.Size]byte
	Problem string
}

// RotationInput is what PlanRotation decides on.
type RotationInput struct {
	// Want is the digest of the Secret's tls.crt leaf, Stamp the digest of the Secret's content
	// (topology.CertificateStamp).
	Want  [sha256.Size]byte
	Stamp string
	// Restarting is the stamp of a restart already chosen, Reloaded the stamp recorded as
	// reloaded on every instance, both as the observed StatefulSets carry them; SeenAt is when
	// the hook first saw Stamp, Now the pass's time, Grace how long after SeenAt the kubelet has
	// projected the content (ProjectionGrace by default).
	Restarting, Reloaded string
	SeenAt, Now          time.Time
	Grace                time.Duration
	// Served lists the instances in the order they are reloaded.
	Served []ServedCertificate
	// What this pass's reloads did, by member: Refused holds Memgraph's refusal; Accepted the
	// reloads Memgraph accepted; Unproven those after which the member still served another
	// certificate.
	Refused  map[string]string
	Accepted map[string]bool
	Unproven map[string]bool
}

// RotationStep is the rotation stage's decision.
type RotationStep struct {
	Action RotationAction
	Member string // the member to reload (RotationReload)
	// Stale are the members seen serving another certificate than the Secret's.
	Stale []string
	// Stamp is RotationInput.Stamp: what a restart stamps on the StatefulSets. Record is the
	// stamp to record as reloaded on every instance ("": keep the recorded one).
	Stamp, Record string
	Message       string
}

// Rotating reports whether the rotation stage has work left.
func (s RotationStep) Rotating() bool { return s.Action != RotationNone }

// PlanRotation decides the next rotation step (see the package comment above). It never reloads
// two instances at once: the shell proves each before asking again.
func PlanRotation(in RotationInput) RotationStep {
	step := RotationStep{Stamp: in.Stamp}
	var unseen []string
	for _, s := range in.Served {
		switch {
		case s.Problem != "":
			unseen = append(unseen, s.Member)
		case s.Leaf != in.Want:
			step.Stale = append(step.Stale, s.Member)
		}
	}
	if restart, why := restartNeeded(in, step.Stale); restart {
		step.Action, step.Message = RotationRestart, bound(why)
		return step
	}
	if in.Restarting == in.Stamp && len(step.Stale) == 0 {
		// The restart chosen for this content took the place of the reloads: a pod reads the
		// files as they are when it starts, and the rollout restarts the rest.
		if in.Reloaded != in.Stamp {
			step.Record = in.Stamp
		}
		return step
	}
	round := in.Reloaded != in.Stamp && !in.Now.Before(in.SeenAt.Add(in.Grace))
	for _, s := range in.Served {
		stale := s.Problem == "" && s.Leaf != in.Want
		if (stale || round && s.Problem == "") && !in.Accepted[s.Member] {
			step.Action, step.Member = RotationReload, s.Member
			step.Message = bound(fmt.Sprintf("reloading the certificate of %s, one instance at a time%s", s.Member, staleNote(step.Stale)))
			return step
		}
	}
	switch {
	case in.Reloaded == in.Stamp && len(step.Stale) == 0:
		return step
	case round && len(step.Stale) == 0 && len(unseen) == 0:
		step.Record = in.Stamp // every instance reloaded the projected files
		return step
	case round && len(unseen) > 0:
		step.Action, step.Message = RotationWait, bound("waiting to reload the certificate of "+strings.Join(unseen, ", ")+
			", which cannot be reached"+staleNote(step.Stale))
		return step
	}
	step.Action = RotationWait
	step.Message = bound(fmt.Sprintf("waiting for the kubelet to project the Secret's new files (reloading every instance from %s)%s",
		in.SeenAt.Add(in.Grace).UTC().Format(time.RFC3339), staleNote(step.Stale)))
	return step
}

// restartNeeded: an instance refused the reload, a restart is already chosen for this content
// while instances serve another certificate, or, past the grace, one still serves another
// certificate after a reload Memgraph accepted.
func restartNeeded(in RotationInput, stale []string) (bool, string) {
	for _, s := range in.Served {
		if msg, ok := in.Refused[s.Member]; ok {
			return true, fmt.Sprintf("%s refused to reload its certificate (%s), so the pods are restarted%s", s.Member, msg, staleNote(stale))
		}
	}
	if len(stale) == 0 {
		return false, ""
	}
	if in.Restarting == in.Stamp {
		return true, "restarting the pods for the new certificate" + staleNote(stale)
	}
	if !in.Now.Before(in.SeenAt.Add(in.Grace)) {
		for _, m := range stale {
			if in.Unproven[m] {
				return true, fmt.Sprintf("%s reloaded but still serves the previous certificate %s after the Secret changed, "+
					"so the pods are restarted%s", m, in.Grace, staleNote(stale))
			}
		}
	}
	return false, ""
}

func staleNote(stale []string) string {
	if len(stale) == 0 {
		return ""
	}
	return ": " + strings.Join(stale, ", ") + " serve another certificate than the Secret's tls.crt"
}

// RotationOrder lists the declared instances in the order they are reloaded: data instances,
// then coordinators, each by ordinal. A reload interrupts no connection, so the order only
// makes the progress predictable.
func RotationOrder(d topology.Declared) []topology.Member {
	members := make([]topology.Member, 0, len(d.DataInstances)+len(d.Coordinators))
	for _, di := range d.DataInstances {
		members = append(members, di.Member)
	}
	for _, c := range d.Coordinators {
		members = append(members, c.Member)
	}
	return members
}

// ReloadTLS is one RELOAD … TLS query (memgraph.ReloadBoltTLSQuery or ReloadClusterTLSQuery)
// sent to Member itself.
type ReloadTLS struct{ Member, Query string }

func (r ReloadTLS) String() string  { return r.Query }
func (ReloadTLS) Kind() CommandKind { return KindReloadTLS }
func (ReloadTLS) command()          {}

// reload sends the reload query on c, which must be a client that can.
func (r ReloadTLS) reload(ctx context.Context, c memgraph.Client) Result {
	reloader, ok := c.(memgraph.TLSReloader)
	if !ok {
		return Result{Problem: "this hook's Bolt connector cannot send RELOAD … TLS"}
	}
	return Result{Err: reloader.ReloadTLS(ctx, r.Query)}
}

// rotate is the certificate rotation stage, for a pass that wrote nothing, with spec.tls whose
// Secret content the StatefulSets do not record as reloaded everywhere: it sees which
// certificate each declared instance serves, and while some serve another than the Secret's
// tls.crt it asks PlanRotation what to do and does it, one instance at a time: the reload
// queries, then a new handshake to prove the new certificate is served, before asking again. A
// refused reload ends the stage with the restart decision, which the response records on the
// StatefulSets. Each reload becomes a status.operations record. A dry run only plans. The
// outcome's Rotation is the last step planned (zero when it had nothing to rotate).
func (p *pass) rotate() flow {
	if !p.in.TLS.Enabled || !p.in.CanProbe || p.expired {
		return goOn
	}
	record, now := p.in.Certificate, p.in.Now
	in := RotationInput{Want: p.in.TLS.Leaf, Stamp: p.in.TLS.Stamp, Restarting: record.Restart,
		Reloaded: record.Reloaded, SeenAt: now, Now: now, Grace: p.in.ProjectionGrace,
		Refused: map[string]string{}, Accepted: map[string]bool{}, Unproven: map[string]bool{}}
	if stamp, at, ok := record.SeenStamp(); ok && stamp == in.Stamp {
		in.SeenAt = at
	}
	if record.Seen == "" || in.Reloaded == in.Stamp {
		// The first record (the pods started with these files), or every instance reloaded this
		// content: nothing to rotate, and a converged sync costs no handshake.
		return goOn
	}
	members := RotationOrder(p.d)
	in.Served = make([]ServedCertificate, len(members))
	for i, m := range members {
		var ok bool
		if in.Served[i], ok = p.served(m); !ok {
			return waiting
		}
	}
	for range len(members) + 1 {
		step := PlanRotation(in)
		if p.out.Rotation = step; step.Action != RotationReload || p.in.DryRun || p.expired {
			return goOn
		}
		i := slices.IndexFunc(members, func(m topology.Member) bool { return m.Name == step.Member })
		m := members[i]
		refusal, answered, f := p.reload(m)
		switch {
		case f == waiting:
			return waiting
		case !answered:
			return goOn // unreachable or out of budget: the next pass sees again
		case refusal != "":
			in.Refused[m.Name] = refusal
			continue
		}
		in.Accepted[m.Name] = true
		var ok bool
		if in.Served[i], ok = p.served(m); !ok {
			return waiting
		}
		if in.Served[i].Leaf != in.Want {
			in.Unproven[m.Name] = true
			continue
		}
		p.log(LevelInfo, "reloaded the TLS certificates", "instance", m.Name)
	}
	p.out.Rotation = PlanRotation(in)
	return goOn
}

// served is the certificate m serves, seen by a handshake.
func (p *pass) served(m topology.Member) (ServedCertificate, bool) {
	got, ok := p.read(Read{What: ReadCertificate, From: m.BoltServer})
	switch {
	case !ok:
		return ServedCertificate{}, false
	case got.Err != nil:
		return ServedCertificate{Member: m.Name, Problem: got.Err.Error()}, true
	}
	return ServedCertificate{Member: m.Name, Leaf: got.Leaf}, true
}

// reload sends RELOAD BOLT_SERVER TLS and, when m's pod runs with intra-cluster TLS, RELOAD
// INTRA_CLUSTER TLS to m (a data instance with spec.auth's credentials: the account needs the
// RELOAD_TLS privilege), and returns the refusal ("" when both succeeded); answered is false
// when m could not be asked (unreachable, or the budget ran out), which is no refusal. The pod
// decides, not the spec: Memgraph reloads the files its process started with (interpreter.cpp
// 5205–5246), so a pod started with the --cluster-* flags keeps needing the reload while a spec
// that turns intra-cluster TLS off waits for hibernation, and one started without them refuses
// it ("key or certificate file is empty", cluster_tls.cpp 38–41).
func (p *pass) reload(m topology.Member) (refusal string, answered bool, f flow) {
	_, data := topology.ParseDataInstanceName(m.Name)
	queries := []string{memgraph.ReloadBoltTLSQuery}
	if p.in.ClusterTLSPods[m.Pod] {
		queries = append(queries, memgraph.ReloadClusterTLSQuery)
	}
	for _, q := range queries {
		got, ok := p.write(Write{To: m.BoltServer, Command: ReloadTLS{Member: m.Name, Query: q}, Auth: data})
		switch {
		case !ok:
			return "", false, waiting
		case got.Problem != "":
			return got.Problem, true, goOn
		}
		interrupted := p.reloaded(m.Name, q, got)
		if got.Err != nil {
			return memgraphMessage(got.Err), !interrupted, goOn
		}
	}
	return "", true, goOn
}
