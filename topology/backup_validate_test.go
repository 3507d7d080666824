package topology

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func backupSpec() MemgraphBackupSpec {
	return MemgraphBackupSpec{Cluster: "prod", DeletionPolicy: BackupRetain, Timeout: "6h"}
}

func destination() BackupDestination {
	return BackupDestination{S3: S3Destination{
		Endpoint: "https://s3.eu-west-1.amazonaws.com", Bucket: "memgraph-backups", Prefix: "prod/nightly", Region: "eu-west-1",
		CredentialsSecret: SecretReference{Name: "s3-credentials"},
	}}
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
		{"no timeout: the default's", func(s *MemgraphBackupSpec) { s.Timeout = "" }, nil},
		{"the shortest timeout", func(s *MemgraphBackupSpec) { s.Timeout = "10s" }, nil},
		{"the longest timeout, in parts", func(s *MemgraphBackupSpec) { s.Timeout = "167h59m60s" }, nil},
		{"a timeout too short", func(s *MemgraphBackupSpec) { s.Timeout = "9s" }, []string{"spec.timeout: " + MsgBackupTimeout}},
		{"a timeout too long", func(s *MemgraphBackupSpec) { s.Timeout = "169h" }, []string{"spec.timeout: " + MsgBackupTimeout}},
		{"a timeout in days", func(s *MemgraphBackupSpec) { s.Timeout = "1d" }, []string{"spec.timeout: " + MsgBackupTimeout}},
		{"no cluster", func(s *MemgraphBackupSpec) { s.Cluster = "" }, []string{"spec.cluster: " + MsgBackupCluster}},
		{"an unknown deletion policy", func(s *MemgraphBackupSpec) { s.DeletionPolicy = "Keep" },
			[]string{"spec.deletionPolicy: " + msgDeletionPolicy}},
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

func TestBackupTimeout(t *testing.T) {
	for timeout, want := range map[string]time.Duration{
		"": 6 * time.Hour, "6h": 6 * time.Hour, "20s": 20 * time.Second, "1h30m": 90 * time.Minute, "5s": 6 * time.Hour,
	} {
		if got := (MemgraphBackupSpec{Timeout: timeout}).TimeoutDuration(); got != want {
			t.Errorf("timeout %q: %v, want %v", timeout, got, want)
		}
	}
}

func TestScheduledBackupViolations(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(s *MemgraphScheduledBackupSpec)
		want []string
	}{
		{"a valid spec", func(*MemgraphScheduledBackupSpec) {}, nil},
		{"maxAge in hours and weeks", func(s *MemgraphScheduledBackupSpec) { s.MaxAge = "8w" }, nil},
		{"maxAge in months is not a unit", func(s *MemgraphScheduledBackupSpec) { s.MaxAge = "1m" },
			[]string{"spec.maxAge: " + MsgMaxAge}},
		{"maxAge of zero days", func(s *MemgraphScheduledBackupSpec) { s.MaxAge = "0d" }, []string{"spec.maxAge: " + MsgMaxAge}},
		{"an unknown owner reference", func(s *MemgraphScheduledBackupSpec) { s.BackupOwnerReference = "cluster" },
			[]string{"spec.backupOwnerReference: " + msgBackupOwnerReference}},
		{"the template's rules", func(s *MemgraphScheduledBackupSpec) { s.BackupTemplate.Timeout = "1s" },
			[]string{"spec.backupTemplate.timeout: " + MsgBackupTimeout}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := MemgraphScheduledBackupSpec{Schedule: "@daily", BackupTemplate: backupSpec(), Keep: 7, MaxAge: "30d", BackupOwnerReference: BackupOwnerNone}
			tc.edit(&s)
			if diff := cmp.Diff(tc.want, violationMessages(ScheduledBackupViolations("spec", &s))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestMaxAgeDuration(t *testing.T) {
	for s, want := range map[string]time.Duration{"36h": 36 * time.Hour, "30d": 30 * 24 * time.Hour, "2w": 14 * 24 * time.Hour} {
		if got, ok := MaxAgeDuration(s); !ok || got != want {
			t.Errorf("%s: %v %v, want %v", s, got, ok, want)
		}
	}
	for _, s := range []string{"", "30", "d", "1.5d", "100000d", "-1d"} {
		if _, ok := MaxAgeDuration(s); ok {
			t.Errorf("%q parsed", s)
		}
	}
}

func TestValidateBackupDestination(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(s *S3Destination)
		want []string
	}{
		{"a valid destination", func(*S3Destination) {}, nil},
		{"plain http with insecure", func(s *S3Destination) { s.Endpoint, s.Insecure = "http://minio.storage.svc:9000", true }, nil},
		{"plain http without insecure", func(s *S3Destination) { s.Endpoint = "http://minio.storage.svc:9000" },
			[]string{"spec.backup.destination.s3: " + MsgS3Insecure}},
		{"endpoint with a path", func(s *S3Destination) { s.Endpoint = "https://s3.example.com/bucket" },
			[]string{"spec.backup.destination.s3.endpoint: " + MsgS3Endpoint}},
		{"endpoint without a scheme", func(s *S3Destination) { s.Endpoint = "s3.example.com" },
			[]string{"spec.backup.destination.s3.endpoint: " + MsgS3Endpoint}},
		{"upper-case bucket", func(s *S3Destination) { s.Bucket = "Backups" },
			[]string{"spec.backup.destination.s3.bucket: " + MsgS3Bucket}},
		{"prefix with a trailing slash", func(s *S3Destination) { s.Prefix = "prod/" },
			[]string{"spec.backup.destination.s3.prefix: " + MsgS3Prefix}},
		{"a CA Secret that is no name", func(s *S3Destination) { s.CASecret = &SecretReference{Name: "CA_Bundle"} },
			[]string{"spec.backup.destination.s3.caSecret.name: " + MsgSecretReference}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := destination()
			tc.edit(&d.S3)
			mc := minimalCluster()
			mc.Spec.Backup = &ClusterBackup{Destination: &d}
			var got []string
			if err := mc.Validate(); err != nil {
				var ve *ValidationError
				if !errors.As(err, &ve) {
					t.Fatal(err)
				}
				got = violationMessages(ve.Violations)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateFromBackup(t *testing.T) {
	dest := destination()
	for _, tc := range []struct {
		name        string
		from        FromBackup
		destination bool // spec.backup.destination is set
		want        []string
	}{
		{"by name, from spec.backup.destination", FromBackup{Name: "nightly-29000000"}, true, nil},
		{"by key, from spec.backup.destination", FromBackup{Key: "prod/nightly/default/prod/b-1/snapshot"}, true, nil},
		{"by key, from another store", FromBackup{Destination: &dest, Key: "prod/nightly/default/prod/b-1/snapshot"}, false, nil},
		{"by name without a store", FromBackup{Name: "b"}, false, []string{MsgFromBackupNeedsStore}},
		{"by key without a store", FromBackup{Key: "k"}, false, []string{MsgFromBackupNeedsStore}},
		{"name and key", FromBackup{Name: "b", Key: "k"}, true, []string{MsgFromBackupOneOf}},
		{"neither", FromBackup{}, true, []string{MsgFromBackupOneOf}},
		{"a destination without a key", FromBackup{Name: "b", Destination: &dest}, true, []string{MsgFromBackupDestWithKey}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mc := minimalCluster()
			mc.Spec.Bootstrap = &Bootstrap{FromBackup: &tc.from}
			if tc.destination {
				mc.Spec.Backup = &ClusterBackup{Destination: &dest}
			}
			if diff := cmp.Diff(tc.want, messagesOf(t, mc.Validate())); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// Each backup CRD carries exactly the CEL messages backup_validate.go mirrors.
func TestBackupCRDRulesMatchGoValidation(t *testing.T) {
	for file, want := range map[string][]string{
		"memgraph.com_memgraphbackups.yaml":          {MsgBackupSpecImmutable, MsgBackupCluster, MsgBackupTimeout},
		"memgraph.com_memgraphscheduledbackups.yaml": {MsgSchedule, MsgBackupCluster, MsgBackupTimeout, MsgMaxAge},
	} {
		rules, got := celRules(loadCRDSchemaAt(t, "../manifests/crd/"+file))
		slices.Sort(got)
		slices.Sort(want)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: CEL messages differ from backup_validate.go (-go +crd):\n%s", file, diff)
		}
		for _, pattern := range []string{clusterNamePattern, stepTimeoutPattern} {
			if !strings.Contains(strings.Join(rules, "\n"), pattern) {
				t.Errorf("%s: no CEL rule uses %q, which BackupViolations uses", file, pattern)
			}
		}
	}
}

// A backup CRD has no field that names a store: the destination is the cluster's.
func TestBackupCRDsNameNoStore(t *testing.T) {
	for _, file := range []string{"memgraph.com_memgraphbackups.yaml", "memgraph.com_memgraphscheduledbackups.yaml"} {
		raw := loadCRDSchemaAt(t, "../manifests/crd/"+file)
		spec := raw.Properties["spec"]
		fields := specFieldNames(spec)
		for _, f := range fields {
			if strings.Contains(f, "destination") || strings.Contains(f, "endpoint") || strings.Contains(f, "bucket") {
				t.Errorf("%s: spec field %s names a store", file, f)
			}
		}
	}
}

// specFieldNames are the dotted paths of every property under s.
func specFieldNames(s crdSchema) []string {
	var out []string
	for name, p := range s.Properties {
		out = append(out, name)
		for _, sub := range specFieldNames(p) {
			out = append(out, name+"."+sub)
		}
	}
	if s.Items != nil {
		out = append(out, specFieldNames(*s.Items)...)
	}
	return out
}
