package v1alpha1

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The Go side of the backup kinds' CEL rules and of spec.backup's and bootstrap.fromBackup's in
// the MemgraphCluster, each message word for word the rule's in backup_types.go and types.go
// (backup_validate_test.go and crd_test.go check the generated CRDs against them).
const (
	MsgBackupSpecImmutable   = "a MemgraphBackup's spec is immutable: a backup is taken once, of one cluster; create a new MemgraphBackup instead"
	MsgBackupCluster         = "cluster must name a MemgraphCluster in the backup's namespace: lower-case letters, digits and '-', starting with a letter"
	MsgBackupTimeout         = "timeout must be a duration from 10s to 168h written in hours, minutes and seconds, such as 6h, 90m or 1h30m: how long the backup may take from its creation"
	MsgS3Endpoint            = "destination.s3.endpoint must be the object store's URL without a path, https://host[:port] or http://host[:port], such as https://s3.eu-west-1.amazonaws.com"
	MsgS3Insecure            = "destination.s3.endpoint is plain http://: the database's snapshots and the store's requests would cross the network unencrypted; use the store's https:// URL, or set destination.s3.insecure: true to accept plain HTTP"
	MsgS3Bucket              = "destination.s3.bucket must be a bucket name: 3 to 63 lower-case letters, digits, '.' and '-', starting and ending with a letter or digit"
	MsgS3Prefix              = "destination.s3.prefix must be a key prefix such as backups/production, without a leading or trailing '/' and without '//'"
	MsgSecretReference       = "name must name a Secret in the same namespace: lower-case letters, digits, '-' and '.'"
	MsgFromBackupCreateOnly  = "bootstrap.fromBackup can only be set when the cluster is created: restoring replaces the data, and an existing cluster already has data of its own. To restore a backup, create a new MemgraphCluster with bootstrap.fromBackup (under another name, or after deleting this one and its PersistentVolumeClaims)"
	MsgFromBackupOneOf       = "bootstrap.fromBackup must name either a MemgraphBackup (name) or the key of its default database's object (key, and destination when the object is not in spec.backup.destination), not both"
	MsgFromBackupDestWithKey = "bootstrap.fromBackup.destination goes with bootstrap.fromBackup.key: the key of the object in that destination, as the MemgraphBackup's status.key named it; a MemgraphBackup named by name is read from spec.backup.destination"
	MsgFromBackupNeedsStore  = "bootstrap.fromBackup reads the backup from spec.backup.destination unless it names a store of its own: set spec.backup.destination (the store the backup is in, where the cluster's own backups will go too), or bootstrap.fromBackup.destination with key"
	MsgSchedule              = "schedule must be a cron schedule of five fields in UTC (minute hour day-of-month month day-of-week), such as \"0 3 * * *\", or a descriptor such as @daily or @every 6h"
	MsgMaxAge                = "maxAge must be a whole number of hours, days or weeks, such as 36h, 30d or 8w"
	msgDeletionPolicy        = "deletionPolicy must be Retain or Delete"
	msgBackupOwnerReference  = "backupOwnerReference must be none or self"
	minBackupTimeout         = "10s"
	maxBackupTimeout         = "168h"
	DefaultBackupTimeout     = "6h"
	maxAgePattern            = `^[1-9][0-9]{0,4}[hdw]$`
)

// Patterns shared, character for character, with the CEL rules.
const (
	s3EndpointPattern = `^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?/?$`
	s3BucketPattern   = `^[a-z0-9][a-z0-9.-]*[a-z0-9]$`
)

var (
	s3EndpointRE = regexp.MustCompile(s3EndpointPattern)
	s3BucketRE   = regexp.MustCompile(s3BucketPattern)
	maxAgeRE     = regexp.MustCompile(maxAgePattern)
)

// BackupViolations are the CEL rules of a MemgraphBackup spec (at path, such as "spec" or
// "spec.backupTemplate") that spec breaks, for a spec that may have skipped admission.
func BackupViolations(path string, s *MemgraphBackupSpec) []Violation {
	var vs violations
	vs.add(len(s.Cluster) > maxClusterNameLength || !clusterNameRE.MatchString(s.Cluster), path+".cluster", MsgBackupCluster)
	vs.add(s.DeletionPolicy != "" && s.DeletionPolicy != BackupRetain && s.DeletionPolicy != BackupDelete, path+".deletionPolicy", msgDeletionPolicy)
	_, ok := backupTimeout(s.Timeout)
	vs.add(s.Timeout != "" && !ok, path+".timeout", MsgBackupTimeout)
	return vs
}

// ScheduledBackupViolations are the CEL rules of a MemgraphScheduledBackup spec (at path) that
// spec breaks, its backupTemplate's included.
func ScheduledBackupViolations(path string, s *MemgraphScheduledBackupSpec) []Violation {
	vs := violations(BackupViolations(path+".backupTemplate", &s.BackupTemplate))
	_, ok := MaxAgeDuration(s.MaxAge)
	vs.add(s.MaxAge != "" && !ok, path+".maxAge", MsgMaxAge)
	vs.add(s.BackupOwnerReference != "" && s.BackupOwnerReference != BackupOwnerNone && s.BackupOwnerReference != BackupOwnerSelf,
		path+".backupOwnerReference", msgBackupOwnerReference)
	return vs
}

// TimeoutDuration is spec.timeout: DefaultBackupTimeout when unset or (in a spec that skipped
// admission) invalid.
func (s MemgraphBackupSpec) TimeoutDuration() time.Duration {
	if d, ok := backupTimeout(s.Timeout); ok {
		return d
	}
	d, _ := backupTimeout(DefaultBackupTimeout)
	return d
}

// backupTimeout is the twin of the timeout rule: whole hours, minutes and seconds, from 10s to
// 168h.
func backupTimeout(s string) (time.Duration, bool) {
	if !stepTimeoutRE.MatchString(s) {
		return 0, false
	}
	lowest, _ := durationSeconds(minBackupTimeout)
	highest, _ := durationSeconds(maxBackupTimeout)
	d, ok := durationSeconds(s)
	return time.Duration(d) * time.Second, ok && d >= lowest && d <= highest
}

// MaxAgeDuration is a maxAge (<n>h, <n>d or <n>w) as a duration; ok is false for anything else,
// "" included.
func MaxAgeDuration(s string) (time.Duration, bool) {
	if !maxAgeRE.MatchString(s) {
		return 0, false
	}
	n, _ := strconv.Atoi(s[:len(s)-1]) // at most five digits
	unit := map[byte]time.Duration{'h': time.Hour, 'd': 24 * time.Hour, 'w': 7 * 24 * time.Hour}[s[len(s)-1]]
	return time.Duration(n) * unit, true
}

// destinationRules checks a destination's CEL rules.
func destinationRules(vs *violations, path string, d *BackupDestination) {
	s3 := &d.S3
	vs.add(!s3EndpointRE.MatchString(s3.Endpoint), path+".s3.endpoint", MsgS3Endpoint)
	vs.add(strings.HasPrefix(s3.Endpoint, "http://") && !s3.Insecure, path+".s3", MsgS3Insecure)
	vs.add(len(s3.Bucket) < 3 || len(s3.Bucket) > 63 || !s3BucketRE.MatchString(s3.Bucket), path+".s3.bucket", MsgS3Bucket)
	vs.add(strings.HasPrefix(s3.Prefix, "/") || strings.HasSuffix(s3.Prefix, "/") || strings.Contains(s3.Prefix, "//"), path+".s3.prefix", MsgS3Prefix)
	vs.add(!clusterDomainRE.MatchString(s3.CredentialsSecret.Name), path+".s3.credentialsSecret.name", MsgSecretReference)
	vs.add(s3.CASecret != nil && !clusterDomainRE.MatchString(s3.CASecret.Name), path+".s3.caSecret.name", MsgSecretReference)
}

// validateBackups is the twin of the rules of a cluster's spec.backup.destination and
// bootstrap.fromBackup.
func validateBackups(vs *violations, s *MemgraphClusterSpec) {
	hasDestination := s.Backup != nil && s.Backup.Destination != nil
	if hasDestination {
		destinationRules(vs, "spec.backup.destination", s.Backup.Destination)
	}
	if s.Bootstrap == nil || s.Bootstrap.FromBackup == nil {
		return
	}
	f := s.Bootstrap.FromBackup
	vs.add((f.Name != "") == (f.Key != ""), "spec.bootstrap.fromBackup", MsgFromBackupOneOf)
	vs.add(f.Destination != nil && f.Key == "", "spec.bootstrap.fromBackup", MsgFromBackupDestWithKey)
	vs.add(f.Destination == nil && !hasDestination, "spec", MsgFromBackupNeedsStore)
	if f.Destination != nil {
		destinationRules(vs, "spec.bootstrap.fromBackup.destination", f.Destination)
	}
}

// fromBackupChanged is the twin of the spec's rule that fromBackup is set only at creation:
// new sets it, and old did not set it to the same.
func fromBackupChanged(old, new *MemgraphClusterSpec) bool {
	nf := fromBackupOf(new)
	if nf == nil {
		return false
	}
	of := fromBackupOf(old)
	return of == nil || !equalFromBackup(*of, *nf)
}

func fromBackupOf(s *MemgraphClusterSpec) *FromBackup {
	if s.Bootstrap == nil {
		return nil
	}
	return s.Bootstrap.FromBackup
}

func equalFromBackup(a, b FromBackup) bool {
	if a.Name != b.Name || a.Key != b.Key || (a.Destination == nil) != (b.Destination == nil) {
		return false
	}
	return a.Destination == nil || equalDestination(*a.Destination, *b.Destination)
}

func equalDestination(a, b BackupDestination) bool {
	x, y := a.S3, b.S3
	return x.Endpoint == y.Endpoint && x.Bucket == y.Bucket && x.Prefix == y.Prefix && x.Region == y.Region &&
		x.Insecure == y.Insecure && x.CredentialsSecret == y.CredentialsSecret && (x.CASecret == nil) == (y.CASecret == nil) &&
		(x.CASecret == nil || *x.CASecret == *y.CASecret)
}
