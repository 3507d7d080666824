package topology

import (
	"regexp"
	"strings"
)

// The Go side of the backup kinds' CEL rules, each message word for word the rule's in
// backup_types.go (backup_validate_test.go checks the generated CRDs against them).
const (
	MsgBackupSpecImmutable = "a MemgraphBackup's spec is immutable: a backup is taken once, of one cluster, to one destination; create a new MemgraphBackup instead"
	MsgBackupCluster       = "cluster must name a MemgraphCluster in the backup's namespace: lower-case letters, digits and '-', starting with a letter"
	MsgS3Endpoint          = "destination.s3.endpoint must be the object store's URL without a path, https://host[:port] or http://host[:port], such as https://s3.eu-west-1.amazonaws.com"
	MsgS3Bucket            = "destination.s3.bucket must be a bucket name: 3 to 63 lower-case letters, digits, '.' and '-', starting and ending with a letter or digit"
	MsgS3Prefix            = "destination.s3.prefix must be a key prefix such as backups/production, without a leading or trailing '/' and without '//'"
	MsgSecretReference     = "name must name a Secret in the same namespace: lower-case letters, digits, '-' and '.'"
	MsgSchedule            = "schedule must be a cron schedule of five fields in UTC (minute hour day-of-month month day-of-week), such as \"0 3 * * *\", or a descriptor such as @daily or @every 6h"
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
