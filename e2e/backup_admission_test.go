//go:build e2e

package e2e_test

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
)

func init() {
	const s3 = "{endpoint: 'https://s3.example.org', bucket: backups, credentialsSecret: {name: s3-creds}}"
	own := func(s3 string) string { return "backup: {destination: {s3: " + s3 + "}}" }
	other := func(s3 string) string {
		return "bootstrap: {fromBackup: {destination: {s3: " + s3 + "}, key: a/b.snapshot}}"
	}
	celCases = append(celCases,
		celCase{name: "destination http without insecure", field: "spec.backup.destination.s3",
			invalid: own("{endpoint: 'http://minio.storage.svc:9000', bucket: backups, credentialsSecret: {name: s3-creds}}"),
			valid:   own("{endpoint: 'http://minio.storage.svc:9000', insecure: true, bucket: backups, credentialsSecret: {name: s3-creds}}")},
		celCase{name: "destination bucket", field: "spec.backup.destination.s3.bucket",
			invalid: own("{endpoint: 'https://s3.example.org', bucket: Backups_, credentialsSecret: {name: s3-creds}}"), valid: own(s3)},
		celCase{name: "destination caSecret", field: "spec.backup.destination.s3.caSecret.name",
			invalid: own("{endpoint: 'https://s3.example.org', bucket: backups, credentialsSecret: {name: s3-creds}, caSecret: {name: Bad_Name}}"),
			valid:   own("{endpoint: 'https://s3.example.org', bucket: backups, credentialsSecret: {name: s3-creds}, caSecret: {name: s3-ca}}")},
		celCase{name: "destination credentialsSecret", field: "spec.backup.destination.s3.credentialsSecret.name",
			invalid: own("{endpoint: 'https://s3.example.org', bucket: backups, credentialsSecret: {name: Bad_Name}}"), valid: own(s3)},
		celCase{name: "destination endpoint", field: "spec.backup.destination.s3.endpoint",
			invalid: own("{endpoint: 's3.example.org/path', bucket: backups, credentialsSecret: {name: s3-creds}}"), valid: own(s3)},
		celCase{name: "destination prefix", field: "spec.backup.destination.s3.prefix",
			invalid: own("{endpoint: 'https://s3.example.org', bucket: backups, prefix: /prod/, credentialsSecret: {name: s3-creds}}"),
			valid:   own("{endpoint: 'https://s3.example.org', bucket: backups, prefix: prod, credentialsSecret: {name: s3-creds}}")},
		celCase{name: "fromBackup names both", field: "spec.bootstrap.fromBackup",
			invalid: "{" + own(s3) + ", bootstrap: {fromBackup: {name: b, key: k}}}", valid: "{" + own(s3) + ", bootstrap: {fromBackup: {name: b}}}"},
		celCase{name: "fromBackup destination without key", field: "spec.bootstrap.fromBackup",
			invalid: "bootstrap: {fromBackup: {name: b, destination: {s3: " + s3 + "}}}", valid: other(s3)},
		celCase{name: "fromBackup without a store", field: "spec",
			invalid: "bootstrap: {fromBackup: {key: k}}", valid: "{" + own(s3) + ", bootstrap: {fromBackup: {key: k}}}"},
		celCase{name: "fromBackup http without insecure", field: "spec.bootstrap.fromBackup.destination.s3",
			invalid: other("{endpoint: 'http://old.example.org', bucket: backups, credentialsSecret: {name: s3-creds}}"),
			valid:   other("{endpoint: 'http://old.example.org', insecure: true, bucket: backups, credentialsSecret: {name: s3-creds}}")},
		celCase{name: "fromBackup bucket", field: "spec.bootstrap.fromBackup.destination.s3.bucket",
			invalid: other("{endpoint: 'https://s3.example.org', bucket: Backups_, credentialsSecret: {name: s3-creds}}"), valid: other(s3)},
		celCase{name: "fromBackup caSecret", field: "spec.bootstrap.fromBackup.destination.s3.caSecret.name",
			invalid: other("{endpoint: 'https://s3.example.org', bucket: backups, credentialsSecret: {name: s3-creds}, caSecret: {name: Bad_Name}}"),
			valid:   other("{endpoint: 'https://s3.example.org', bucket: backups, credentialsSecret: {name: s3-creds}, caSecret: {name: s3-ca}}")},
		celCase{name: "fromBackup credentialsSecret", field: "spec.bootstrap.fromBackup.destination.s3.credentialsSecret.name",
			invalid: other("{endpoint: 'https://s3.example.org', bucket: backups, credentialsSecret: {name: Bad_Name}}"), valid: other(s3)},
		celCase{name: "fromBackup endpoint", field: "spec.bootstrap.fromBackup.destination.s3.endpoint",
			invalid: other("{endpoint: 's3.example.org/path', bucket: backups, credentialsSecret: {name: s3-creds}}"), valid: other(s3)},
		celCase{name: "fromBackup prefix", field: "spec.bootstrap.fromBackup.destination.s3.prefix",
			invalid: other("{endpoint: 'https://s3.example.org', bucket: backups, prefix: /prod/, credentialsSecret: {name: s3-creds}}"),
			valid:   other("{endpoint: 'https://s3.example.org', bucket: backups, prefix: prod, credentialsSecret: {name: s3-creds}}")},
	)
	transitionCases = append(transitionCases,
		struct{ name, field, base, invalid, valid string }{name: "fromBackup added to an existing cluster", field: "spec",
			base: own(s3), invalid: "{" + own(s3) + ", bootstrap: {fromBackup: {name: b}}}", valid: "{" + own(s3) + ", dataInstances: 3}"},
	)
}

// A MemgraphBackup and a MemgraphScheduledBackup name no store: a destination is an unknown
// field the API server refuses (strict field validation, as kubectl applies), and a timeout or
// maxAge out of bounds is refused with the rule's words. Dry runs: nothing is stored.
func TestBackupKindsNameNoStore(t *testing.T) {
	installBackupCRDs(t)
	ns := newNamespace(t, "backup-admission")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	strict := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: "Strict"}
	backupOf := func(spec map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": v1alpha1.APIVersion, "kind": v1alpha1.BackupKind,
			"metadata": map[string]any{"name": "b", "namespace": ns}, "spec": spec}}
	}
	scheduleOf := func(spec map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": v1alpha1.APIVersion, "kind": v1alpha1.ScheduledBackupKind,
			"metadata": map[string]any{"name": "s", "namespace": ns}, "spec": spec}}
	}
	destination := map[string]any{"s3": map[string]any{"endpoint": "https://attacker.example.org", "bucket": "exfiltrate",
		"credentialsSecret": map[string]any{"name": "c"}}}
	for _, tc := range []struct {
		name string
		obj  *unstructured.Unstructured
		want string
	}{
		{"a backup with a destination", backupOf(map[string]any{"cluster": "mg", "destination": destination}), `unknown field "spec.destination"`},
		{"a backup with a short timeout", backupOf(map[string]any{"cluster": "mg", "timeout": "5s"}), v1alpha1.MsgBackupTimeout},
		{"a schedule whose template has a destination", scheduleOf(map[string]any{"schedule": "@daily",
			"backupTemplate": map[string]any{"cluster": "mg", "destination": destination}}), `unknown field "spec.backupTemplate.destination"`},
		{"a schedule with maxAge in months", scheduleOf(map[string]any{"schedule": "@daily", "maxAge": "1m",
			"backupTemplate": map[string]any{"cluster": "mg"}}), v1alpha1.MsgMaxAge},
		{"a schedule owning its backups as the cluster", scheduleOf(map[string]any{"schedule": "@daily", "backupOwnerReference": "cluster",
			"backupTemplate": map[string]any{"cluster": "mg"}}), `Unsupported value: "cluster"`},
	} {
		client := backupClient(ns)
		if tc.obj.GetKind() == v1alpha1.ScheduledBackupKind {
			client = scheduleClient(ns)
		}
		if _, err := client.Create(ctx, tc.obj, strict); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a refusal saying %q", tc.name, err, tc.want)
		}
	}
	ok := scheduleOf(map[string]any{"schedule": "@daily", "maxAge": "30d", "backupOwnerReference": "self",
		"backupTemplate": map[string]any{"cluster": "mg", "timeout": "10s"}})
	if _, err := scheduleClient(ns).Create(ctx, ok, strict); err != nil {
		t.Errorf("a valid schedule: %v", err)
	}
}
