package v1alpha1_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/internal/apitest"
)

func backupSpec() v1alpha1.MemgraphBackupSpec {
	return v1alpha1.MemgraphBackupSpec{Cluster: "prod", DeletionPolicy: v1alpha1.BackupRetain, Timeout: "6h"}
}

func violationMessages(vs []v1alpha1.Violation) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Field+": "+v.Message)
	}
	return out
}

func TestBackupViolations(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(s *v1alpha1.MemgraphBackupSpec)
		want []string
	}{
		{"a valid spec", func(*v1alpha1.MemgraphBackupSpec) {}, nil},
		{"no timeout: the default's", func(s *v1alpha1.MemgraphBackupSpec) { s.Timeout = "" }, nil},
		{"the shortest timeout", func(s *v1alpha1.MemgraphBackupSpec) { s.Timeout = "10s" }, nil},
		{"the longest timeout, in parts", func(s *v1alpha1.MemgraphBackupSpec) { s.Timeout = "167h59m60s" }, nil},
		{"a timeout too short", func(s *v1alpha1.MemgraphBackupSpec) { s.Timeout = "9s" }, []string{"spec.timeout: " + v1alpha1.MsgBackupTimeout}},
		{"a timeout too long", func(s *v1alpha1.MemgraphBackupSpec) { s.Timeout = "169h" }, []string{"spec.timeout: " + v1alpha1.MsgBackupTimeout}},
		{"a timeout in days", func(s *v1alpha1.MemgraphBackupSpec) { s.Timeout = "1d" }, []string{"spec.timeout: " + v1alpha1.MsgBackupTimeout}},
		{"no cluster", func(s *v1alpha1.MemgraphBackupSpec) { s.Cluster = "" }, []string{"spec.cluster: " + v1alpha1.MsgBackupCluster}},
		{"an unknown deletion policy", func(s *v1alpha1.MemgraphBackupSpec) { s.DeletionPolicy = "Keep" },
			[]string{"spec.deletionPolicy: " + v1alpha1.MsgDeletionPolicy}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := backupSpec()
			tc.edit(&s)
			if diff := cmp.Diff(tc.want, violationMessages(v1alpha1.BackupViolations("spec", &s))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestBackupTimeout(t *testing.T) {
	for timeout, want := range map[string]time.Duration{
		"": 6 * time.Hour, "6h": 6 * time.Hour, "20s": 20 * time.Second, "1h30m": 90 * time.Minute, "5s": 6 * time.Hour,
	} {
		if got := (v1alpha1.MemgraphBackupSpec{Timeout: timeout}).TimeoutDuration(); got != want {
			t.Errorf("timeout %q: %v, want %v", timeout, got, want)
		}
	}
}

func TestScheduledBackupViolations(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(s *v1alpha1.MemgraphScheduledBackupSpec)
		want []string
	}{
		{"a valid spec", func(*v1alpha1.MemgraphScheduledBackupSpec) {}, nil},
		{"maxAge in hours and weeks", func(s *v1alpha1.MemgraphScheduledBackupSpec) { s.MaxAge = "8w" }, nil},
		{"maxAge in months is not a unit", func(s *v1alpha1.MemgraphScheduledBackupSpec) { s.MaxAge = "1m" },
			[]string{"spec.maxAge: " + v1alpha1.MsgMaxAge}},
		{"maxAge of zero days", func(s *v1alpha1.MemgraphScheduledBackupSpec) { s.MaxAge = "0d" }, []string{"spec.maxAge: " + v1alpha1.MsgMaxAge}},
		{"an unknown owner reference", func(s *v1alpha1.MemgraphScheduledBackupSpec) { s.BackupOwnerReference = "cluster" },
			[]string{"spec.backupOwnerReference: " + v1alpha1.MsgBackupOwnerReference}},
		{"the template's rules", func(s *v1alpha1.MemgraphScheduledBackupSpec) { s.BackupTemplate.Timeout = "1s" },
			[]string{"spec.backupTemplate.timeout: " + v1alpha1.MsgBackupTimeout}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := v1alpha1.MemgraphScheduledBackupSpec{Schedule: "@daily", BackupTemplate: backupSpec(), Keep: 7, MaxAge: "30d", BackupOwnerReference: v1alpha1.BackupOwnerNone}
			tc.edit(&s)
			if diff := cmp.Diff(tc.want, violationMessages(v1alpha1.ScheduledBackupViolations("spec", &s))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestMaxAgeDuration(t *testing.T) {
	for s, want := range map[string]time.Duration{"36h": 36 * time.Hour, "30d": 30 * 24 * time.Hour, "2w": 14 * 24 * time.Hour} {
		if got, ok := v1alpha1.MaxAgeDuration(s); !ok || got != want {
			t.Errorf("%s: %v %v, want %v", s, got, ok, want)
		}
	}
	for _, s := range []string{"", "30", "d", "1.5d", "100000d", "-1d"} {
		if _, ok := v1alpha1.MaxAgeDuration(s); ok {
			t.Errorf("%q parsed", s)
		}
	}
}

func TestValidateBackupDestination(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(s *v1alpha1.S3Destination)
		want []string
	}{
		{"a valid destination", func(*v1alpha1.S3Destination) {}, nil},
		{"plain http with insecure", func(s *v1alpha1.S3Destination) { s.Endpoint, s.Insecure = "http://minio.storage.svc:9000", true }, nil},
		{"plain http without insecure", func(s *v1alpha1.S3Destination) { s.Endpoint = "http://minio.storage.svc:9000" },
			[]string{"spec.backup.destination.s3: " + v1alpha1.MsgS3Insecure}},
		{"endpoint with a path", func(s *v1alpha1.S3Destination) { s.Endpoint = "https://s3.example.com/bucket" },
			[]string{"spec.backup.destination.s3.endpoint: " + v1alpha1.MsgS3Endpoint}},
		{"endpoint without a scheme", func(s *v1alpha1.S3Destination) { s.Endpoint = "s3.example.com" },
			[]string{"spec.backup.destination.s3.endpoint: " + v1alpha1.MsgS3Endpoint}},
		{"upper-case bucket", func(s *v1alpha1.S3Destination) { s.Bucket = "Backups" },
			[]string{"spec.backup.destination.s3.bucket: " + v1alpha1.MsgS3Bucket}},
		{"prefix with a trailing slash", func(s *v1alpha1.S3Destination) { s.Prefix = "prod/" },
			[]string{"spec.backup.destination.s3.prefix: " + v1alpha1.MsgS3Prefix}},
		{"a CA Secret that is no name", func(s *v1alpha1.S3Destination) { s.CASecret = &v1alpha1.SecretReference{Name: "CA_Bundle"} },
			[]string{"spec.backup.destination.s3.caSecret.name: " + v1alpha1.MsgSecretReference}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := apitest.Destination()
			tc.edit(&d.S3)
			mc := apitest.MinimalCluster()
			mc.Spec.Backup = &v1alpha1.ClusterBackup{Destination: &d}
			var got []string
			if err := mc.Validate(); err != nil {
				var ve *v1alpha1.ValidationError
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
	dest := apitest.Destination()
	for _, tc := range []struct {
		name        string
		from        v1alpha1.FromBackup
		destination bool // spec.backup.destination is set
		want        []string
	}{
		{"by name, from spec.backup.destination", v1alpha1.FromBackup{Name: "nightly-29000000"}, true, nil},
		{"by key, from spec.backup.destination", v1alpha1.FromBackup{Key: "prod/nightly/default/prod/b-1/snapshot"}, true, nil},
		{"by key, from another store", v1alpha1.FromBackup{Destination: &dest, Key: "prod/nightly/default/prod/b-1/snapshot"}, false, nil},
		{"by name without a store", v1alpha1.FromBackup{Name: "b"}, false, []string{v1alpha1.MsgFromBackupNeedsStore}},
		{"by key without a store", v1alpha1.FromBackup{Key: "k"}, false, []string{v1alpha1.MsgFromBackupNeedsStore}},
		{"name and key", v1alpha1.FromBackup{Name: "b", Key: "k"}, true, []string{v1alpha1.MsgFromBackupOneOf}},
		{"neither", v1alpha1.FromBackup{}, true, []string{v1alpha1.MsgFromBackupOneOf}},
		{"a destination without a key", v1alpha1.FromBackup{Name: "b", Destination: &dest}, true, []string{v1alpha1.MsgFromBackupDestWithKey}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mc := apitest.MinimalCluster()
			mc.Spec.Bootstrap = &v1alpha1.Bootstrap{FromBackup: &tc.from}
			if tc.destination {
				mc.Spec.Backup = &v1alpha1.ClusterBackup{Destination: &dest}
			}
			if diff := cmp.Diff(tc.want, apitest.MessagesOf(t, mc.Validate())); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// Each backup CRD carries exactly the CEL messages backup_validate.go mirrors.
func TestBackupCRDRulesMatchGoValidation(t *testing.T) {
	for file, want := range map[string][]string{
		"memgraph.com_memgraphbackups.yaml":          {v1alpha1.MsgBackupSpecImmutable, v1alpha1.MsgBackupCluster, v1alpha1.MsgBackupTimeout},
		"memgraph.com_memgraphscheduledbackups.yaml": {v1alpha1.MsgSchedule, v1alpha1.MsgBackupCluster, v1alpha1.MsgBackupTimeout, v1alpha1.MsgMaxAge},
	} {
		rules, got := celRules(loadCRDSchemaAt(t, "../../manifests/crd/"+file))
		slices.Sort(got)
		slices.Sort(want)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: CEL messages differ from backup_validate.go (-go +crd):\n%s", file, diff)
		}
		for _, pattern := range []string{v1alpha1.ClusterNamePattern, v1alpha1.StepTimeoutPattern} {
			if !strings.Contains(strings.Join(rules, "\n"), pattern) {
				t.Errorf("%s: no CEL rule uses %q, which BackupViolations uses", file, pattern)
			}
		}
	}
}

// A backup CRD has no field that names a store: the destination is the cluster's.
func TestBackupCRDsNameNoStore(t *testing.T) {
	for _, file := range []string{"memgraph.com_memgraphbackups.yaml", "memgraph.com_memgraphscheduledbackups.yaml"} {
		raw := loadCRDSchemaAt(t, "../../manifests/crd/"+file)
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
