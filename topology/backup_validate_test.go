package topology

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func backupSpec() MemgraphBackupSpec {
	return MemgraphBackupSpec{Cluster: "prod", DeletionPolicy: BackupRetain, Destination: BackupDestination{S3: S3Destination{
		Endpoint: "https://s3.eu-west-1.amazonaws.com", Bucket: "memgraph-backups", Prefix: "prod/nightly", Region: "eu-west-1",
		CredentialsSecret: SecretReference{Name: "s3-credentials"},
	}}}
}

func violationMessages(vs []Violation) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Field+": "+v.Message)
	}
	return out
}

func TestBackupViolations(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(s *MemgraphBackupSpec)
		want []string
	}{
		{"a valid spec", func(*MemgraphBackupSpec) {}, nil},
		{"plain http endpoint with a port", func(s *MemgraphBackupSpec) { s.Destination.S3.Endpoint = "http://minio.storage.svc:9000" }, nil},
		{"endpoint with a path", func(s *MemgraphBackupSpec) { s.Destination.S3.Endpoint = "https://s3.example.com/bucket" },
			[]string{"spec.destination.s3.endpoint: " + MsgS3Endpoint}},
		{"endpoint without a scheme", func(s *MemgraphBackupSpec) { s.Destination.S3.Endpoint = "s3.example.com" },
			[]string{"spec.destination.s3.endpoint: " + MsgS3Endpoint}},
		{"upper-case bucket", func(s *MemgraphBackupSpec) { s.Destination.S3.Bucket = "Backups" },
			[]string{"spec.destination.s3.bucket: " + MsgS3Bucket}},
		{"prefix with a trailing slash", func(s *MemgraphBackupSpec) { s.Destination.S3.Prefix = "prod/" },
			[]string{"spec.destination.s3.prefix: " + MsgS3Prefix}},
		{"no cluster", func(s *MemgraphBackupSpec) { s.Cluster = "" }, []string{"spec.cluster: " + MsgBackupCluster}},
		{"a CA Secret that is no name", func(s *MemgraphBackupSpec) { s.Destination.S3.CASecret = &SecretReference{Name: "CA_Bundle"} },
			[]string{"spec.destination.s3.caSecret.name: " + MsgSecretReference}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := backupSpec()
			tc.edit(&s)
			if diff := cmp.Diff(tc.want, violationMessages(BackupViolations("spec", &s))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateFromBackup(t *testing.T) {
	dest := backupSpec().Destination
	for _, tc := range []struct {
		name string
		from FromBackup
		want []string
	}{
		{"by name", FromBackup{Name: "nightly-29000000"}, nil},
		{"by destination and key", FromBackup{Destination: &dest, Key: "prod/nightly/default/prod/b-1.snapshot"}, nil},
		{"both", FromBackup{Name: "b", Destination: &dest, Key: "k"}, []string{MsgFromBackupOneOf}},
		{"neither", FromBackup{}, []string{MsgFromBackupOneOf}},
		{"a key without its destination", FromBackup{Key: "k"}, []string{MsgFromBackupKeyWithDest}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mc := minimalCluster()
			mc.Spec.Bootstrap = &Bootstrap{FromBackup: &tc.from}
			if diff := cmp.Diff(tc.want, messagesOf(t, mc.Validate())); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// Each backup CRD carries exactly the CEL messages backup_validate.go mirrors.
func TestBackupCRDRulesMatchGoValidation(t *testing.T) {
	destination := []string{MsgS3Endpoint, MsgS3Bucket, MsgS3Prefix, MsgSecretReference, MsgSecretReference}
	for file, want := range map[string][]string{
		"memgraph.com_memgraphbackups.yaml":          append([]string{MsgBackupSpecImmutable, MsgBackupCluster}, destination...),
		"memgraph.com_memgraphscheduledbackups.yaml": append([]string{MsgSchedule, MsgBackupCluster}, destination...),
	} {
		rules, got := celRules(loadCRDSchemaAt(t, "../manifests/crd/"+file))
		slices.Sort(got)
		slices.Sort(want)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: CEL messages differ from backup_validate.go (-go +crd):\n%s", file, diff)
		}
		for _, pattern := range []string{s3EndpointPattern, s3BucketPattern, clusterNamePattern} {
			if !strings.Contains(strings.Join(rules, "\n"), pattern) {
				t.Errorf("%s: no CEL rule uses %q, which BackupViolations uses", file, pattern)
			}
		}
	}
}
