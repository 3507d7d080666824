package main

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/spf13/cobra"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
)

var (
	backupsGVR   = v1alpha1.GroupVersion.WithResource(v1alpha1.BackupResource)
	schedulesGVR = v1alpha1.GroupVersion.WithResource(v1alpha1.ScheduledBackupResource)
)

// backupOptions are the backup verb's flags: the backup's deletion policy and timeout, from a
// schedule's template or spelled out. Where it goes is the cluster's spec.backup.destination.
type backupOptions struct {
	name, fromSchedule            string
	deletionPolicy, backupTimeout string
	dryRun, wait                  bool
	timeout                       time.Duration
}

// backupCommand creates a MemgraphBackup of a cluster (docs/backup.md), which goes to the
// cluster's spec.backup.destination: with the deletion policy and timeout of a
// MemgraphScheduledBackup's template (--from-schedule), or of the flags.
func (p *plugin) backupCommand() *cobra.Command {
	var o backupOptions
	out := p.out
	cmd := p.clusterCommand("backup", "Back the cluster up now: create a MemgraphBackup (docs/backup.md)", func(cmd *cobra.Command, s *session, cluster string) error {
		spec, err := o.spec(cmd.Context(), s, cluster)
		if err != nil {
			return err
		}
		name := o.name
		if name == "" {
			name = cluster + "-" + time.Now().UTC().Format("20060102-150405")
		}
		b := &v1alpha1.MemgraphBackup{TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.APIVersion, Kind: v1alpha1.BackupKind},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.namespace}, Spec: spec}
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(b)
		if err != nil {
			return err
		}
		delete(obj, "status")
		delete(obj["metadata"].(map[string]any), "creationTimestamp")
		if !o.dryRun {
			if err := s.checkDestination(cmd.Context(), cluster); err != nil {
				return err
			}
		}
		if o.dryRun {
			raw, err := yaml.Marshal(obj)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(out, "%s", raw)
			return err
		}
		if _, err := s.client.Resource(backupsGVR).Namespace(s.namespace).Create(cmd.Context(), &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create MemgraphBackup %s: %w", name, err)
		}
		fmt.Fprintf(out, "memgraphbackup/%s created\n", name)
		if !o.wait {
			return nil
		}
		return s.waitBackup(cmd.Context(), name, o.timeout)
	})
	f := cmd.Flags()
	f.StringVar(&o.name, "name", "", "the MemgraphBackup's name (default <cluster>-<UTC time>)")
	f.StringVar(&o.fromSchedule, "from-schedule", "", "take the deletion policy and timeout of this MemgraphScheduledBackup's backupTemplate")
	f.StringVar(&o.deletionPolicy, "deletion-policy", string(v1alpha1.BackupRetain), "Retain or Delete: what deleting the MemgraphBackup does to its objects")
	f.StringVar(&o.backupTimeout, "backup-timeout", v1alpha1.DefaultBackupTimeout, "spec.timeout: how long the backup may take from its creation (10s to 168h)")
	f.BoolVar(&o.dryRun, "dry-run", false, "print the MemgraphBackup instead of creating it")
	f.BoolVar(&o.wait, "wait", false, "wait until the backup is Completed or Failed")
	f.DurationVar(&o.timeout, "timeout", 30*time.Minute, "how long --wait waits")
	return cmd
}

// spec is the MemgraphBackup spec of cluster the options describe, checked as admission would.
func (o *backupOptions) spec(ctx context.Context, s *session, cluster string) (v1alpha1.MemgraphBackupSpec, error) {
	var spec v1alpha1.MemgraphBackupSpec
	if o.fromSchedule != "" {
		u, err := s.client.Resource(schedulesGVR).Namespace(s.namespace).Get(ctx, o.fromSchedule, metav1.GetOptions{})
		if err != nil {
			return spec, fmt.Errorf("MemgraphScheduledBackup %s: %w", o.fromSchedule, err)
		}
		var sb v1alpha1.MemgraphScheduledBackup
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &sb); err != nil {
			return spec, err
		}
		spec = sb.Spec.BackupTemplate
	} else {
		spec = v1alpha1.MemgraphBackupSpec{DeletionPolicy: v1alpha1.BackupDeletionPolicy(o.deletionPolicy), Timeout: o.backupTimeout}
	}
	spec.Cluster = cluster
	if vs := v1alpha1.BackupViolations("spec", &spec); len(vs) > 0 {
		return spec, usageError{fmt.Errorf("%s: %s", vs[0].Field, vs[0].Message)}
	}
	return spec, nil
}

// checkDestination refuses a backup of a cluster that names no store: its backups go only to
// its spec.backup.destination, and one created now would wait for it until its deadline.
func (s *session) checkDestination(ctx context.Context, cluster string) error {
	mgc, err := s.get(ctx, cluster)
	if err != nil {
		return err
	}
	if _, found, _ := unstructured.NestedMap(mgc.Object, "spec", "backup", "destination"); !found {
		return fmt.Errorf("MemgraphCluster %s/%s has no spec.backup.destination: its backups go to that store alone; "+
			"set it first (docs/backup.md)", s.namespace, cluster)
	}
	return nil
}

// waitBackup follows MemgraphBackup name until it is done: nil when Completed.
func (s *session) waitBackup(ctx context.Context, name string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		u, err := s.client.Resource(backupsGVR).Namespace(s.namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		var b v1alpha1.MemgraphBackup
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &b); err != nil {
			return err
		}
		switch b.Status.Phase {
		case v1alpha1.BackupCompleted:
			fmt.Fprintf(s.out, "memgraphbackup/%s Completed: %s on %s, %d bytes at %s\n", name, b.Status.Snapshot, b.Status.Instance, b.Status.Size, b.Status.Key)
			return nil
		case v1alpha1.BackupFailed:
			return fmt.Errorf("memgraphbackup/%s Failed (%s): %s", name, b.Status.Reason, b.Status.Error)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("memgraphbackup/%s is still %s after %s (%s)", name, b.Status.Phase, timeout, b.Status.Error)
		case <-time.After(s.poll):
		}
	}
}
