package planner

import (
	"crypto/sha256"
	"fmt"
	"strings"
)

// Certificate rotation: when the spec.tls Secret's content changes, every instance must serve
// the new certificate. Memgraph re-reads its files on RELOAD … TLS without a restart, so the hook
// reloads one instance at a time and proves each (a new TLS handshake sees the Secret's leaf)
// before the next; an instance that refuses the reload is rolled instead, through the rollout
// (RotationRestart).

// RotationAction is what the rotation stage does next.
type RotationAction string

const (
	// RotationNone: every instance seen serves the Secret's certificate, or there is no spec.tls.
	RotationNone RotationAction = ""
	// RotationReload: send the reload queries to Member, then prove it.
	RotationReload RotationAction = "reload"
	// RotationWait: every instance left accepted a reload but still serves another certificate:
	// the kubelet has not projected the Secret's new files into its pod yet (it does so within
	// its sync period, about a minute). The next sync reloads again.
	RotationWait RotationAction = "wait"
	// RotationRestart: an instance refused the reload, so the pods are rolled (a pod starts with
	// the files as they are); the StatefulSets carry Stamp (topology.AnnotationCertificateRestart).
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
	// Restarting is the stamp the observed StatefulSets carry: a restart already chosen for it.
	Restarting string
	// Served lists the instances in the order they are reloaded.
	Served []ServedCertificate
	// Refused: Memgraph's refusal of a reload sent in this pass, by member; Unproven: a reload
	// Memgraph accepted after which the member still served another certificate.
	Refused  map[string]string
	Unproven map[string]bool
}

// RotationStep is the rotation stage's decision.
type RotationStep struct {
	Action RotationAction
	Member string // the member to reload (RotationReload)
	// Stale are the members seen serving another certificate than the Secret's.
	Stale []string
	// Stamp is RotationInput.Stamp: what a restart stamps on the StatefulSets.
	Stamp string
	// Reloaded are the members whose reload this pass proved, for the status.
	Reloaded []string
	Message  string
}

// Rotating reports whether instances serve another certificate than the Secret's.
func (s RotationStep) Rotating() bool { return len(s.Stale) > 0 }

// PlanRotation decides the next rotation step: nothing when every instance seen serves the
// Secret's certificate (an instance that could not be seen is another stage's concern); the
// restart already chosen for this Secret content; a restart when an instance refused a reload;
// otherwise a reload of the first stale instance not yet reloaded in this pass; otherwise a wait
// for the kubelet. It never reloads two instances at once: the shell proves each before asking
// again.
func PlanRotation(in RotationInput) RotationStep {
	step := RotationStep{Stamp: in.Stamp}
	for _, s := range in.Served {
		if s.Problem == "" && s.Leaf != in.Want {
			step.Stale = append(step.Stale, s.Member)
		}
	}
	if len(step.Stale) == 0 {
		return step
	}
	stale := strings.Join(step.Stale, ", ")
	if in.Restarting == in.Stamp {
		step.Action = RotationRestart
		step.Message = fmt.Sprintf("restarting the pods for the new certificate: %s still serve another one", stale)
		return step
	}
	for _, m := range step.Stale {
		if msg, ok := in.Refused[m]; ok {
			step.Action = RotationRestart
			step.Message = bound(fmt.Sprintf("%s refused to reload its certificate (%s), so the pods are restarted: %s serve another certificate",
				m, msg, stale))
			return step
		}
	}
	for _, m := range step.Stale {
		if !in.Unproven[m] {
			step.Action, step.Member = RotationReload, m
			step.Message = fmt.Sprintf("reloading the certificate of %s, one instance at a time: %s serve another one", m, stale)
			return step
		}
	}
	step.Action = RotationWait
	step.Message = fmt.Sprintf("waiting for the kubelet to project the Secret's new files: %s accepted a reload but still serve "+
		"the previous certificate", stale)
	return step
}

// KindReloadTLS counts the reload queries (memgraph_hooks_commands_total).
const KindReloadTLS CommandKind = "RELOAD TLS"
