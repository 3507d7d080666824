package backupcontroller

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/wire"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
)

// Each MemgraphBackup a schedule creates carries the scheduled time it stands for and its
// schedule's name.
const (
	AnnotationScheduledAt = "memgraph.com/scheduled-at"
	LabelScheduledBackup  = "memgraph.com/scheduled-backup"
)

// The conditions of a MemgraphScheduledBackup: Scheduled, and LastBackupSucceeded.
const (
	conditionScheduled  = "Scheduled"
	reasonScheduled     = "Scheduled"
	reasonSuspended     = "Suspended"
	reasonInvalid       = "InvalidSchedule"
	reasonDeleting      = "Deleting"
	conditionLastBackup = "LastBackupSucceeded"
	reasonNoBackupEnded = "NoBackupEnded"
)

// scheduledResponse is a MemgraphScheduledBackup's sync (or finalize) answer.
type scheduledResponse struct {
	Status             v1alpha1.MemgraphScheduledBackupStatus `json:"status"`
	Children           []map[string]any                       `json:"children"`
	ResyncAfterSeconds float64                                `json:"resyncAfterSeconds,omitempty"`
	Finalized          bool                                   `json:"finalized,omitempty"`
}

// observedRun is one MemgraphBackup child as observed: its run and its spec as it is.
type observedRun struct {
	run  planner.ScheduledRun
	spec json.RawMessage
}

// ScheduledSync serves a MemgraphScheduledBackup's sync and finalize hooks. The sync's
// children are the MemgraphBackups planner.DecideSchedule keeps and creates, at the hook's
// clock. The finalize hook returns none, so that Metacontroller deletes them while the schedule,
// held by its finalizer, still exists and says (backupOwnerReference) whether their objects go
// with them; the schedule goes once they are gone.
func (ctl *Controller) ScheduledSync(r *http.Request) (any, error) {
	var req wire.CompositeRequest
	if err := wire.DecodeRequest(r, &req); err != nil {
		return nil, err
	}
	var sb v1alpha1.MemgraphScheduledBackup
	if err := wire.DecodeAt(req.Parent, "parent", &sb); err != nil || sb.Name == "" {
		return nil, cmpErr(err, wire.Badf("parent has no metadata.name: expected a MemgraphScheduledBackup"))
	}
	if vs := v1alpha1.ScheduledBackupViolations("parent.spec", &sb.Spec); len(vs) > 0 {
		return nil, wire.Badf("MemgraphScheduledBackup %s has a spec admission refuses: %s: %s", wire.ObjectKey(sb.Namespace, sb.Name), vs[0].Field, vs[0].Message)
	}
	runs, err := observeRuns(req.Children[wire.BackupKind])
	if err != nil {
		return nil, err
	}
	now := ctl.cfg.Now().UTC()
	maxAge, _ := v1alpha1.MaxAgeDuration(sb.Spec.MaxAge)
	in := planner.ScheduleInput{Name: sb.Name, Now: now, Schedule: sb.Spec.Schedule, Suspend: sb.Spec.Suspend,
		Keep: int(max(sb.Spec.Keep, 1)), MaxAge: maxAge, Created: sb.CreationTimestamp.Time}
	for _, o := range runs {
		in.Backups = append(in.Backups, o.run)
	}
	d := planner.DecideSchedule(in)
	if req.Finalizing {
		return ctl.finalizeSchedule(&sb, d, len(runs)), nil
	}
	resp := scheduledResponse{Children: scheduledChildren(&sb, runs, d), ResyncAfterSeconds: d.ResyncAfter.Seconds(),
		Status: scheduleStatus(&sb, d, now)}
	ctl.observeSchedule(&sb, d)
	ctl.cfg.Log.Info("scheduled backup", "schedule", wire.ObjectKey(sb.Namespace, sb.Name), "created", d.Create != nil, "dropped", len(d.Drop))
	return resp, nil
}

// finalizeSchedule answers the finalize hook of a schedule being deleted: no children, so that
// Metacontroller deletes every one of its MemgraphBackups (whose own finalize hooks keep or
// remove their objects as backupOwnerReference says), and finalized once none is left.
func (ctl *Controller) finalizeSchedule(sb *v1alpha1.MemgraphScheduledBackup, d planner.ScheduleDecision, left int) scheduledResponse {
	st := scheduleStatus(sb, d, ctl.cfg.Now())
	keeps := "their objects stay in the store (backupOwnerReference none)"
	if sb.Spec.BackupOwnerReference == v1alpha1.BackupOwnerSelf {
		keeps = "their objects go as their deletionPolicy says (backupOwnerReference self)"
	}
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: conditionScheduled, Status: metav1.ConditionFalse, Reason: reasonDeleting,
		Message: fmt.Sprintf("the schedule is being deleted: %d MemgraphBackups to delete first; %s", left, keeps), ObservedGeneration: sb.Generation})
	if m := ctl.cfg.Metrics; m != nil && left == 0 {
		m.ScheduleGone(sb.Namespace, sb.Name)
	}
	ctl.cfg.Log.Info("scheduled backup being deleted", "schedule", wire.ObjectKey(sb.Namespace, sb.Name), "backups", left,
		"backupOwnerReference", sb.Spec.BackupOwnerReference)
	return scheduledResponse{Status: st, Children: []map[string]any{}, Finalized: left == 0, ResyncAfterSeconds: pendingPoll.Seconds()}
}

// observeSchedule records the schedule in the metrics: its interval and creation, and its
// newest success.
func (ctl *Controller) observeSchedule(sb *v1alpha1.MemgraphScheduledBackup, d planner.ScheduleDecision) {
	m := ctl.cfg.Metrics
	if m == nil {
		return
	}
	cluster := sb.Spec.BackupTemplate.Cluster
	if d.Interval > 0 && !sb.Spec.Suspend {
		m.ScheduleObserved(sb.Namespace, cluster, sb.Name, d.Interval, sb.CreationTimestamp.Time)
	} else {
		m.ScheduleGone(sb.Namespace, sb.Name)
	}
	if last := d.LastCompleted; last != nil && !last.CompletedAt.IsZero() {
		m.BackupSucceeded(sb.Namespace, cluster, last.CompletedAt)
	}
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
				Phase       v1alpha1.BackupPhase `json:"phase"`
				CompletedAt *metav1.Time         `json:"completedAt"`
				Reason      string               `json:"reason"`
				Error       string               `json:"error"`
			} `json:"status"`
		}
		if err := wire.DecodeAt(group[key], wire.EntryPath("children", wire.BackupKind, key), &child); err != nil {
			return nil, err
		}
		at, err := time.Parse(time.RFC3339, child.Metadata.Annotations[AnnotationScheduledAt])
		if err != nil {
			at = child.Metadata.CreationTimestamp.Time
		}
		run := planner.ScheduledRun{Name: child.Metadata.Name, ScheduledAt: at.UTC(), Phase: child.Status.Phase,
			Reason: child.Status.Reason, Error: child.Status.Error}
		if child.Status.CompletedAt != nil {
			run.CompletedAt = child.Status.CompletedAt.UTC()
		}
		out[child.Metadata.Name] = observedRun{run: run, spec: child.Spec}
	}
	return out, nil
}

// scheduledChildren are the MemgraphBackups to exist: those kept, as observed (a MemgraphBackup's
// spec never changes), and the one created, from the template.
func scheduledChildren(sb *v1alpha1.MemgraphScheduledBackup, runs map[string]observedRun, d planner.ScheduleDecision) []map[string]any {
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

func backupChild(sb *v1alpha1.MemgraphScheduledBackup, r planner.ScheduledRun, spec json.RawMessage) map[string]any {
	return map[string]any{
		"apiVersion": v1alpha1.APIVersion,
		"kind":       v1alpha1.BackupKind,
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
// time and the next, its newest success (kept when that backup is gone, the record the status
// carries forward), and its conditions (whose lastTransitionTime is carried over while their
// status holds): whether it schedules, and whether its newest backup that ended completed.
func scheduleStatus(sb *v1alpha1.MemgraphScheduledBackup, d planner.ScheduleDecision, now time.Time) v1alpha1.MemgraphScheduledBackupStatus {
	st := v1alpha1.MemgraphScheduledBackupStatus{ObservedGeneration: sb.Generation, Conditions: sb.Status.Conditions,
		LastScheduleTime: sb.Status.LastScheduleTime, LastSuccessfulBackup: sb.Status.LastSuccessfulBackup}
	kept := d.Keep
	if d.Create != nil {
		kept = append([]planner.ScheduledRun{*d.Create}, kept...)
	}
	for _, r := range kept {
		st.Backups = append(st.Backups, v1alpha1.ScheduledBackupRef{Name: r.Name, Phase: r.Phase, ScheduledAt: metav1.NewTime(r.ScheduledAt)})
	}
	if len(st.Backups) > 0 && (st.LastScheduleTime == nil || st.Backups[0].ScheduledAt.After(st.LastScheduleTime.Time)) {
		last := st.Backups[0].ScheduledAt
		st.LastScheduleTime = &last
	}
	if c := d.LastCompleted; c != nil && !c.CompletedAt.IsZero() &&
		(st.LastSuccessfulBackup == nil || c.CompletedAt.After(st.LastSuccessfulBackup.Time.Time)) {
		st.LastSuccessfulBackup = &v1alpha1.SuccessfulBackup{Name: c.Name, Time: metav1.NewTime(c.CompletedAt)}
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
	setCondition(&st.Conditions, cond, now)
	setCondition(&st.Conditions, lastBackupCondition(sb, d), now)
	return st
}

// lastBackupCondition says whether the newest of the schedule's backups that ended completed.
func lastBackupCondition(sb *v1alpha1.MemgraphScheduledBackup, d planner.ScheduleDecision) metav1.Condition {
	cond := metav1.Condition{Type: conditionLastBackup, Status: metav1.ConditionUnknown, Reason: reasonNoBackupEnded,
		Message: "no backup of the schedule has completed or failed yet", ObservedGeneration: sb.Generation}
	switch last := d.LastEnded; {
	case last == nil:
	case last.Phase == v1alpha1.BackupCompleted:
		cond.Status, cond.Reason = metav1.ConditionTrue, planner.ReasonCompleted
		cond.Message = fmt.Sprintf("MemgraphBackup %s completed at %s", last.Name, last.CompletedAt.UTC().Format(time.RFC3339))
	default:
		cond.Status, cond.Reason = metav1.ConditionFalse, last.Reason
		if cond.Reason == "" {
			cond.Reason = string(v1alpha1.BackupFailed)
		}
		cond.Message = fmt.Sprintf("MemgraphBackup %s failed: %s", last.Name, last.Error)
	}
	return cond
}

// setCondition sets cond, stamped now when its status changes (meta.SetStatusCondition keeps
// the old lastTransitionTime while the status holds).
func setCondition(conditions *[]metav1.Condition, cond metav1.Condition, now time.Time) {
	cond.LastTransitionTime = metav1.NewTime(now.UTC().Truncate(time.Second))
	meta.SetStatusCondition(conditions, cond)
}
