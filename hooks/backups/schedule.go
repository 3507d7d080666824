package backups

import (
	"encoding/json"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/hooks/wire"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// Each MemgraphBackup a schedule creates carries the scheduled time it stands for and its
// schedule's name.
const (
	AnnotationScheduledAt = "memgraph.com/scheduled-at"
	LabelScheduledBackup  = "memgraph.com/scheduled-backup"
)

// The Scheduled condition of a MemgraphScheduledBackup.
const (
	conditionScheduled = "Scheduled"
	reasonScheduled    = "Scheduled"
	reasonSuspended    = "Suspended"
	reasonInvalid      = "InvalidSchedule"
)

// scheduledResponse is a MemgraphScheduledBackup's sync answer.
type scheduledResponse struct {
	Status             topology.MemgraphScheduledBackupStatus `json:"status"`
	Children           []map[string]any                       `json:"children"`
	ResyncAfterSeconds float64                                `json:"resyncAfterSeconds,omitempty"`
}

// observedRun is one MemgraphBackup child as observed: its run and its spec as it is.
type observedRun struct {
	run  planner.ScheduledRun
	spec json.RawMessage
}

// HandleScheduledSync serves a MemgraphScheduledBackup's sync hook: the children are the
// MemgraphBackups planner.DecideSchedule keeps and creates, at the hook's clock.
func (ctl *Controller) HandleScheduledSync(w http.ResponseWriter, r *http.Request) {
	var req wire.CompositeRequest
	if err := wire.DecodeRequest(r, &req); err != nil {
		ctl.cfg.Fail(w, "scheduledbackup", err)
		return
	}
	var sb topology.MemgraphScheduledBackup
	if err := wire.DecodeAt(req.Parent, "parent", &sb); err != nil || sb.Name == "" {
		ctl.cfg.Fail(w, "scheduledbackup", cmpErr(err, wire.Badf("parent has no metadata.name: expected a MemgraphScheduledBackup")))
		return
	}
	if vs := topology.BackupViolations("parent.spec.backupTemplate", &sb.Spec.BackupTemplate); len(vs) > 0 {
		ctl.cfg.Fail(w, "scheduledbackup", wire.Badf("MemgraphScheduledBackup %s has a spec admission refuses: %s: %s", wire.ObjectKey(sb.Namespace, sb.Name), vs[0].Field, vs[0].Message))
		return
	}
	runs, err := observeRuns(req.Children[wire.BackupKind])
	if err != nil {
		ctl.cfg.Fail(w, "scheduledbackup", err)
		return
	}
	now := ctl.cfg.Now().UTC()
	in := planner.ScheduleInput{Name: sb.Name, Now: now, Schedule: sb.Spec.Schedule, Suspend: sb.Spec.Suspend,
		Keep: int(max(sb.Spec.Keep, 1)), Created: sb.CreationTimestamp.Time}
	for _, o := range runs {
		in.Backups = append(in.Backups, o.run)
	}
	d := planner.DecideSchedule(in)
	resp := scheduledResponse{Children: scheduledChildren(&sb, runs, d), ResyncAfterSeconds: d.ResyncAfter.Seconds(),
		Status: scheduleStatus(&sb, d)}
	ctl.cfg.Log.Info("scheduled backup", "schedule", wire.ObjectKey(sb.Namespace, sb.Name), "created", d.Create != nil, "dropped", len(d.Drop))
	ctl.cfg.Answer(w, "scheduledbackup", http.StatusOK, resp)
}

func cmpErr(err, otherwise error) error {
	if err != nil {
		return err
	}
	return otherwise
}

// observeRuns reads the MemgraphBackup children; one without a readable scheduled time counts
// as scheduled at its creation.
func observeRuns(group map[string]json.RawMessage) (map[string]observedRun, error) {
	out := map[string]observedRun{}
	for _, key := range wire.SortedKeys(group) {
		var child struct {
			Metadata struct {
				Name              string            `json:"name"`
				CreationTimestamp metav1.Time       `json:"creationTimestamp"`
				Annotations       map[string]string `json:"annotations"`
			} `json:"metadata"`
			Spec   json.RawMessage `json:"spec"`
			Status struct {
				Phase topology.BackupPhase `json:"phase"`
			} `json:"status"`
		}
		if err := wire.DecodeAt(group[key], wire.EntryPath("children", wire.BackupKind, key), &child); err != nil {
			return nil, err
		}
		at, err := time.Parse(time.RFC3339, child.Metadata.Annotations[AnnotationScheduledAt])
		if err != nil {
			at = child.Metadata.CreationTimestamp.Time
		}
		out[child.Metadata.Name] = observedRun{
			run:  planner.ScheduledRun{Name: child.Metadata.Name, ScheduledAt: at.UTC(), Phase: child.Status.Phase},
			spec: child.Spec,
		}
	}
	return out, nil
}

// scheduledChildren are the MemgraphBackups to exist: those kept, as observed (a MemgraphBackup's
// spec never changes), and the one created, from the template.
func scheduledChildren(sb *topology.MemgraphScheduledBackup, runs map[string]observedRun, d planner.ScheduleDecision) []map[string]any {
	children := []map[string]any{}
	for _, r := range d.Keep {
		children = append(children, backupChild(sb, r, runs[r.Name].spec))
	}
	if d.Create != nil {
		spec, _ := json.Marshal(sb.Spec.BackupTemplate) // a typed struct: always encodes
		children = append(children, backupChild(sb, *d.Create, spec))
	}
	return children
}

func backupChild(sb *topology.MemgraphScheduledBackup, r planner.ScheduledRun, spec json.RawMessage) map[string]any {
	return map[string]any{
		"apiVersion": topology.APIVersion,
		"kind":       topology.BackupKind,
		"metadata": map[string]any{
			"name":        r.Name,
			"namespace":   sb.Namespace,
			"labels":      map[string]any{LabelScheduledBackup: sb.Name},
			"annotations": map[string]any{AnnotationScheduledAt: r.ScheduledAt.UTC().Format(time.RFC3339)},
		},
		"spec": spec,
	}
}

// scheduleStatus is what the schedule observed: its runs, newest first, the latest scheduled
// time and the next, and whether it schedules (a condition whose lastTransitionTime is carried
// over while its status holds).
func scheduleStatus(sb *topology.MemgraphScheduledBackup, d planner.ScheduleDecision) topology.MemgraphScheduledBackupStatus {
	st := topology.MemgraphScheduledBackupStatus{ObservedGeneration: sb.Generation, Conditions: sb.Status.Conditions}
	kept := d.Keep
	if d.Create != nil {
		kept = append([]planner.ScheduledRun{*d.Create}, kept...)
	}
	for _, r := range kept {
		st.Backups = append(st.Backups, topology.ScheduledBackupRef{Name: r.Name, Phase: r.Phase, ScheduledAt: metav1.NewTime(r.ScheduledAt)})
	}
	if len(st.Backups) > 0 {
		last := st.Backups[0].ScheduledAt
		st.LastScheduleTime = &last
	}
	if !d.Next.IsZero() {
		next := metav1.NewTime(d.Next)
		st.NextScheduleTime = &next
	}
	cond := metav1.Condition{Type: conditionScheduled, Status: metav1.ConditionTrue, Reason: reasonScheduled,
		Message: "backups are taken on the schedule " + sb.Spec.Schedule + " (UTC)", ObservedGeneration: sb.Generation}
	switch {
	case d.Invalid != "":
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, reasonInvalid, d.Invalid
	case sb.Spec.Suspend:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, reasonSuspended, "spec.suspend is true: no backup is scheduled"
	}
	meta.SetStatusCondition(&st.Conditions, cond)
	return st
}
