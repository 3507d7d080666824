package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/spf13/cobra"

	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

var (
	backupsGVR   = topology.GroupVersion.WithResource(topology.BackupResource)
	schedulesGVR = topology.GroupVersion.WithResource(topology.ScheduledBackupResource)
)

// backupOptions are the backup verb's flags: where the backup goes, from a schedule's template or
// spelled out.
type backupOptions struct {
	name, fromSchedule                       string
	endpoint, bucket, prefix, region, secret string
	deletionPolicy                           string
	dryRun, wait                             bool
	timeout                                  time.Duration
}

// backupCommand creates a MemgraphBackup of a cluster (docs/backup.md): the destination of a
// MemgraphScheduledBackup's template (--from-schedule), or the one the flags spell out.
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
		b := &topology.MemgraphBackup{TypeMeta: metav1.TypeMeta{APIVersion: topology.APIVersion, Kind: topology.BackupKind},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.namespace}, Spec: spec}
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(b)
		if err != nil {
			return err
		}
		delete(obj, "status")
		delete(obj["metadata"].(map[string]any), "creationTimestamp")
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
	f.StringVar(&o.fromSchedule, "from-schedule", "", "take the destination and deletion policy of this MemgraphScheduledBackup's backupTemplate")
	f.StringVar(&o.endpoint, "endpoint", "", "the object store's URL, https://host[:port] (or http://)")
	f.StringVar(&o.bucket, "bucket", "", "the bucket")
	f.StringVar(&o.prefix, "prefix", "", "a key prefix, such as backups/production")
	f.StringVar(&o.region, "region", "", "the bucket's region (us-east-1 when unset)")
	f.StringVar(&o.secret, "credentials-secret", "", "the Secret with accessKeyId and secretAccessKey")
	f.StringVar(&o.deletionPolicy, "deletion-policy", string(topology.BackupRetain), "Retain or Delete: what deleting the MemgraphBackup does to its object")
	f.BoolVar(&o.dryRun, "dry-run", false, "print the MemgraphBackup instead of creating it")
	f.BoolVar(&o.wait, "wait", false, "wait until the backup is Completed or Failed")
	f.DurationVar(&o.timeout, "timeout", 30*time.Minute, "how long --wait waits")
	return cmd
}

// spec is the MemgraphBackup spec of cluster the options describe, checked as admission would.
func (o *backupOptions) spec(ctx context.Context, s *session, cluster string) (topology.MemgraphBackupSpec, error) {
	var spec topology.MemgraphBackupSpec
	if o.fromSchedule != "" {
		u, err := s.client.Resource(schedulesGVR).Namespace(s.namespace).Get(ctx, o.fromSchedule, metav1.GetOptions{})
		if err != nil {
			return spec, fmt.Errorf("MemgraphScheduledBackup %s: %w", o.fromSchedule, err)
		}
		var sb topology.MemgraphScheduledBackup
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &sb); err != nil {
			return spec, err
		}
		spec = sb.Spec.BackupTemplate
	} else {
		if o.endpoint == "" || o.bucket == "" || o.secret == "" {
			return spec, usageError{errors.New("name a destination: --from-schedule SCHEDULE, or --endpoint, --bucket and --credentials-secret")}
		}
		spec = topology.MemgraphBackupSpec{DeletionPolicy: topology.BackupDeletionPolicy(o.deletionPolicy),
			Destination: topology.BackupDestination{S3: topology.S3Destination{Endpoint: o.endpoint, Bucket: o.bucket,
				Prefix: o.prefix, Region: o.region, CredentialsSecret: topology.SecretReference{Name: o.secret}}}}
	}
	spec.Cluster = cluster
	if vs := topology.BackupViolations("spec", &spec); len(vs) > 0 {
		return spec, fmt.Errorf("%s: %s", vs[0].Field, vs[0].Message)
	}
	return spec, nil
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
		var b topology.MemgraphBackup
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &b); err != nil {
			return err
		}
		switch b.Status.Phase {
		case topology.BackupCompleted:
			fmt.Fprintf(s.out, "memgraphbackup/%s Completed: %s on %s, %d bytes at %s\n", name, b.Status.Snapshot, b.Status.Instance, b.Status.Size, b.Status.Key)
			return nil
		case topology.BackupFailed:
			return fmt.Errorf("memgraphbackup/%s Failed (%s): %s", name, b.Status.Reason, b.Status.Error)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("memgraphbackup/%s is still %s after %s (%s)", name, b.Status.Phase, timeout, b.Status.Error)
		case <-time.After(s.poll):
		}
	}
}
