package topology

import (
	"regexp"
	"strings"
)

// The Go side of the backup kinds' CEL rules and of bootstrap.fromBackup's in the
// MemgraphCluster, each message word for word the rule's in backup_types.go and types.go
// (backup_validate_test.go and crd_test.go check the generated CRDs against them).
const (
	MsgBackupSpecImmutable   = "a MemgraphBackup's spec is immutable: a backup is taken once, of one cluster, to one destination; create a new MemgraphBackup instead"
	MsgBackupCluster         = "cluster must name a MemgraphCluster in the backup's namespace: lower-case letters, digits and '-', starting with a letter"
	MsgS3Endpoint            = "destination.s3.endpoint must be the object store's URL without a path, https://host[:port] or http://host[:port], such as https://s3.eu-west-1.amazonaws.com"
	MsgS3Bucket              = "destination.s3.bucket must be a bucket name: 3 to 63 lower-case letters, digits, '.' and '-', starting and ending with a letter or digit"
	MsgS3Prefix              = "destination.s3.prefix must be a key prefix such as backups/production, without a leading or trailing '/' and without '//'"
	MsgSecretReference       = "name must name a Secret in the same namespace: lower-case letters, digits, '-' and '.'"
	MsgFromBackupCreateOnly  = "bootstrap.fromBackup can only be set when the cluster is created: restoring replaces the data, and an existing cluster already has data of its own. To restore a backup, create a new MemgraphCluster with bootstrap.fromBackup (under another name, or after deleting this one and its PersistentVolumeClaims)"
	MsgFromBackupOneOf       = "bootstrap.fromBackup must name either a MemgraphBackup (name) or an object (destination and key), not both"
	MsgFromBackupKeyWithDest = "bootstrap.fromBackup.destination and bootstrap.fromBackup.key go together: the key of the object in that destination, as the MemgraphBackup's status.key named it"
	MsgSchedule              = "schedule must be a cron schedule of five fields in UTC (minute hour day-of-month month day-of-week), such as \"0 3 * * *\", or a descriptor such as @daily or @every 6h"
)

// Patterns shared, character for character, with the CEL rules.
const (
	s3EndpointPattern = `^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?/?$`
	s3BucketPattern   = `^[a-z0-9][a-z0-9.-]*[a-z0-9]$`
)

var (
	s3EndpointRE = regexp.MustCompile(s3EndpointPattern)
	s3BucketRE   = regexp.MustCompile(s3BucketPattern)
)

// BackupViolations are the CEL rules of a MemgraphBackup spec (at path, such as "spec" or
// "spec.backupTemplate") that spec breaks, for a spec that may have skipped admission.
func BackupViolations(path string, s *MemgraphBackupSpec) []Violation {
	var vs violations
	vs.add(len(s.Cluster) > maxClusterNameLength || !clusterNameRE.MatchString(s.Cluster), path+".cluster", MsgBackupCluster)
	vs.add(s.DeletionPolicy != "" && s.DeletionPolicy != BackupRetain && s.DeletionPolicy != BackupDelete, path+".deletionPolicy",
		"deletionPolicy must be Retain or Delete")
	destinationRules(&vs, path+".destination", &s.Destination)
	return vs
}

// destinationRules checks a destination's CEL rules.
func destinationRules(vs *violations, path string, d *BackupDestination) {
	s3 := &d.S3
	vs.add(!s3EndpointRE.MatchString(s3.Endpoint), path+".s3.endpoint", MsgS3Endpoint)
	vs.add(len(s3.Bucket) < 3 || len(s3.Bucket) > 63 || !s3BucketRE.MatchString(s3.Bucket), path+".s3.bucket", MsgS3Bucket)
	vs.add(strings.HasPrefix(s3.Prefix, "/") || strings.HasSuffix(s3.Prefix, "/") || strings.Contains(s3.Prefix, "//"), path+".s3.prefix", MsgS3Prefix)
	vs.add(!clusterDomainRE.MatchString(s3.CredentialsSecret.Name), path+".s3.credentialsSecret.name", MsgSecretReference)
	vs.add(s3.CASecret != nil && !clusterDomainRE.MatchString(s3.CASecret.Name), path+".s3.caSecret.name", MsgSecretReference)
}

// validateBootstrap is the twin of bootstrap.fromBackup's rules on a cluster's spec.
func validateBootstrap(vs *violations, s *MemgraphClusterSpec) {
	if s.Bootstrap == nil || s.Bootstrap.FromBackup == nil {
		return
	}
	f := s.Bootstrap.FromBackup
	vs.add((f.Name != "") == (f.Destination != nil || f.Key != ""), "spec.bootstrap.fromBackup", MsgFromBackupOneOf)
	vs.add((f.Destination != nil) != (f.Key != ""), "spec.bootstrap.fromBackup", MsgFromBackupKeyWithDest)
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
		x.CredentialsSecret == y.CredentialsSecret && (x.CASecret == nil) == (y.CASecret == nil) &&
		(x.CASecret == nil || *x.CASecret == *y.CASecret)
}
