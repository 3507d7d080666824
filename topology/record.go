package topology

import (
	"strconv"
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

// TemplateStamps are the stamps this cluster's pod templates carry.
func (c *Cluster) TemplateStamps() TemplateStamps {
	return TemplateStamps{RestartedAt: c.mc.Annotations[AnnotationRestartedAt], CertificateRestart: c.restartStamp}
}

// RenderTemplateRecords sets each role's record on its StatefulSet among children (in stored
// form, coordinators first) and, on the data StatefulSet, the backup agent's pin.
func RenderTemplateRecords(c *Cluster, children []map[string]any, records [2]TemplateRecord, agent AgentPin) {
	for i, set := range []string{CoordinatorSetName(c.Name()), DataSetName(c.Name())} {
		annotations := statefulSetAnnotations(children, set)
		if annotations == nil {
			continue
		}
		r := records[i]
		if r.SpecGeneration > 0 {
			annotations[AnnotationSpecGeneration] = strconv.FormatInt(r.SpecGeneration, 10)
		}
		if r.Release != "" {
			annotations[AnnotationHookRelease] = r.Release
		}
		if r.HookChange {
			annotations[AnnotationTemplateChange] = TemplateChangeHookRelease
		}
		if i == 1 && agent.Image != "" {
			annotations[AnnotationAgentImage] = agent.Image
			annotations[AnnotationAgentProtocol] = strconv.Itoa(agent.Protocol)
		}
	}
}

// statefulSetAnnotations are the metadata.annotations of the StatefulSet called name among
// children (created when absent), or nil when there is none.
func statefulSetAnnotations(children []map[string]any, name string) map[string]any {
	for _, child := range children {
		meta, _ := child["metadata"].(map[string]any)
		if child["kind"] != "StatefulSet" || meta == nil || meta["name"] != name {
			continue
		}
		annotations, _ := meta["annotations"].(map[string]any)
		if annotations == nil {
			annotations = map[string]any{}
			meta["annotations"] = annotations
		}
		return annotations
	}
	return nil
}
