package topology

import (
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
)

// The record of what a StatefulSet's pod template was rendered from: the MemgraphCluster's
// generation and the hook release. A template change that arrives while the generation is the
// one recorded, and the template's stamps (AnnotationRestartedAt, AnnotationCertificateRestart)
// are unchanged, comes from a new release of the hook, not from the spec; the record then marks
// the pending rollout as the hook release's (AnnotationTemplateChange), so that it waits for a
// maintenance window (planner.NextTemplateRecord decides, planner.Maintenance says when). A
// StatefulSet without the record was rendered by an earlier release. This record, like the
// certificate rotation's, is carried forward from one sync to the next on purpose.
const (
	// AnnotationSpecGeneration on a StatefulSet is the MemgraphCluster's metadata.generation the
	// hook last rendered it for.
	AnnotationSpecGeneration = "memgraph.com/spec-generation"
	// AnnotationHookRelease on a StatefulSet is the hook release (TemplateRelease) whose pod
	// templates it carries.
	AnnotationHookRelease = "memgraph.com/hook-release"
	// AnnotationTemplateChange on a StatefulSet is TemplateChangeHookRelease while its pods wait
	// to roll to a pod template that differs from theirs only by what a hook release changed.
	AnnotationTemplateChange  = "memgraph.com/template-change"
	TemplateChangeHookRelease = "hook-release"
)

// TemplateRelease is the hook release whose pod templates this code renders: the first release
// that renders them exactly so. It changes only with the templates, so a release that changes
// no template writes nothing to any StatefulSet. TestPodTemplatesPerRelease holds the reference
// cluster's templates of every release (testdata/releases) and asks for an entry in
// docs/upgrades.md for each release whose templates differ from the one before.
const TemplateRelease = "v0.2.0"

// TemplateRecord is a StatefulSet's record (the annotations above).
// +kubebuilder:object:generate=false
type TemplateRecord struct {
	// SpecGeneration is 0 when the StatefulSet carries no record (an earlier release's).
	SpecGeneration int64
	Release        string
	// HookChange: the rollout pending on the set is a hook release's change alone.
	HookChange bool
}

// ReadTemplateRecord reads the record from a StatefulSet's annotations as observed: a
// generation that is not a positive integer reads as no record.
func ReadTemplateRecord(specGeneration, release, change string) TemplateRecord {
	r := TemplateRecord{Release: release, HookChange: change == TemplateChangeHookRelease}
	if n, err := strconv.ParseInt(specGeneration, 10, 64); err == nil && n > 0 {
		r.SpecGeneration = n
	}
	return r
}

// TemplateStamps are the annotations of a pod template that restart its pods on a human's or a
// rotation's behalf: AnnotationRestartedAt and AnnotationCertificateRestart.
// +kubebuilder:object:generate=false
type TemplateStamps struct {
	RestartedAt        string
	CertificateRestart string
}

// TemplateStamps are the stamps this cluster's pod templates carry with the certificate restart
// stamp restart (Rendering.Restart; "" for none).
func (c *Cluster) TemplateStamps(restart string) TemplateStamps {
	return TemplateStamps{RestartedAt: c.mc.Annotations[AnnotationRestartedAt], CertificateRestart: restart}
}

// recordTemplate puts r on a StatefulSet's metadata; empty values are left out.
func recordTemplate(sts *appsv1.StatefulSet, r TemplateRecord) {
	if r.SpecGeneration > 0 {
		setAnnotation(&sts.ObjectMeta, AnnotationSpecGeneration, strconv.FormatInt(r.SpecGeneration, 10))
	}
	if r.Release != "" {
		setAnnotation(&sts.ObjectMeta, AnnotationHookRelease, r.Release)
	}
	if r.HookChange {
		setAnnotation(&sts.ObjectMeta, AnnotationTemplateChange, TemplateChangeHookRelease)
	}
}

// pinAgent puts the backup agent's pin on the data StatefulSet's metadata (none for a pin
// without an image).
func pinAgent(sts *appsv1.StatefulSet, agent AgentPin) {
	if agent.Image != "" {
		setAnnotation(&sts.ObjectMeta, AnnotationAgentImage, agent.Image)
		setAnnotation(&sts.ObjectMeta, AnnotationAgentProtocol, strconv.Itoa(agent.Protocol))
	}
}
