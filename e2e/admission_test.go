//go:build e2e

package e2e_test

import (
	"context"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
)

// celCase rejects one spec with a CEL rule's message and accepts a valid neighbour that differs
// only in the offending value.
type celCase struct {
	name    string
	field   string // where the rule sits, for the message
	invalid string // spec YAML
	valid   string
	// metadataName replaces the object's name (the root rule checks it).
	invalidName, validName string
}

var celCases = []celCase{
	{name: "name too long", field: "metadata.name", invalidName: strings.Repeat("a", 41), validName: strings.Repeat("a", 40)},
	{name: "name not a DNS label", field: "metadata.name", invalidName: "9lives", validName: "lives9"},
	{name: "clusterDomain", field: "spec.clusterDomain", invalid: "clusterDomain: Cluster.Local.", valid: "clusterDomain: example.org"},
	{name: "coordinators even", field: "spec.coordinators", invalid: "coordinators: 4", valid: "coordinators: 5"},
	{name: "coordinators one", field: "spec.coordinators", invalid: "coordinators: 1", valid: "coordinators: 3"},
	{name: "dataInstances zero", field: "spec.dataInstances", invalid: "dataInstances: 0", valid: "dataInstances: 1"},
	{name: "coordinators beyond 9", field: "spec.coordinators", invalid: "coordinators: 11", valid: "coordinators: 9"},
	{name: "dataInstances beyond 128", field: "spec.dataInstances", invalid: "dataInstances: 129", valid: "dataInstances: 128"},
	{name: "data volume of size zero", field: "spec.storage.data",
		invalid: "storage: {data: {libPVCSize: '0'}}", valid: "storage: {data: {libPVCSize: 512Mi}}"},
	{name: "coordinator volume of negative size", field: "spec.storage.coordinators",
		invalid: "storage: {coordinators: {logPVCSize: -1Gi}}", valid: "storage: {coordinators: {logPVCSize: 2Gi}}"},
	{name: "coordinator extraArgs identity", field: "spec.coordinatorTemplate.extraArgs",
		invalid: "coordinatorTemplate: {extraArgs: [--coordinator-id=7]}", valid: "coordinatorTemplate: {extraArgs: [--log-level=TRACE]}"},
	{name: "coordinator extraArgs port", field: "spec.coordinatorTemplate.extraArgs",
		invalid: "coordinatorTemplate: {extraArgs: [--bolt_port=7688]}", valid: "coordinatorTemplate: {extraArgs: [--bolt-server-name-for-init=x]}"},
	{name: "coordinator extraEnv", field: "spec.coordinatorTemplate.extraEnv",
		invalid: "coordinatorTemplate: {extraEnv: [{name: POD_NAME, value: x}]}", valid: "coordinatorTemplate: {extraEnv: [{name: POD_COLOUR, value: x}]}"},
	{name: "coordinator labels", field: "spec.coordinatorTemplate.labels",
		invalid: "coordinatorTemplate: {labels: {app.kubernetes.io/component: x}}", valid: "coordinatorTemplate: {labels: {team: graph}}"},
	{name: "data extraArgs", field: "spec.dataTemplate.extraArgs",
		invalid: "dataTemplate: {extraArgs: [--management-port=1]}", valid: "dataTemplate: {extraArgs: [--query-execution-timeout-sec=60]}"},
	{name: "data extraEnv", field: "spec.dataTemplate.extraEnv",
		invalid: "dataTemplate: {extraEnv: [{name: MEMGRAPH_ENTERPRISE_LICENSE, value: x}]}", valid: "dataTemplate: {extraEnv: [{name: MEMGRAPH_LOG_LEVEL, value: TRACE}]}"},
	{name: "data labels", field: "spec.dataTemplate.labels",
		invalid: "dataTemplate: {labels: {app.kubernetes.io/managed-by: me}}", valid: "dataTemplate: {labels: {app.kubernetes.io/part-of: shop}}"},
	{name: "data WAL", field: "spec.dataTemplate",
		invalid: "dataTemplate: {extraArgs: [--storage-wal-enabled=false]}", valid: "dataTemplate: {extraArgs: [--storage-snapshot-interval-sec=300]}"},
	{name: "image repository tag", field: "spec.image.repository",
		invalid: "image: {repository: 'docker.io/memgraph/memgraph:3.12.0'}", valid: "image: {repository: 'registry.local:5000/memgraph/memgraph'}"},
	{name: "image repository digest", field: "spec.image.repository",
		invalid: "image: {repository: 'docker.io/memgraph/memgraph@sha256:0'}", valid: "image: {repository: 'docker.io/memgraph/memgraph-mage'}"},
	{name: "image tag", field: "spec.image.tag", invalid: "image: {tag: 'latest please'}", valid: "image: {tag: 3.12.1}"},
	{name: "ports differ", field: "spec.ports", invalid: "ports: {management: 7687}", valid: "ports: {management: 10001}"},
	{name: "coordinator extraArgs TLS", field: "spec.coordinatorTemplate.extraArgs",
		invalid: "coordinatorTemplate: {extraArgs: [--bolt-cert-file=/c.pem]}", valid: "tls: {secretName: bolt-tls}"},
	{name: "tls secret name", field: "spec.tls.secretName", invalid: "tls: {secretName: Bolt_TLS}", valid: "tls: {secretName: bolt-tls}"},
	{name: "auth secret name", field: "spec.auth.secretName", invalid: "auth: {secretName: Hooks_Auth}", valid: "auth: {secretName: memgraph-hooks-auth}"},
	{name: "secret keys differ", field: "spec.secrets",
		invalid: "secrets: {licenseKey: K, organizationKey: K}", valid: "secrets: {licenseKey: K, organizationKey: O}"},
	{name: "rollout step timeout below a minute", field: "spec.rollout.stepTimeout",
		invalid: "rollout: {stepTimeout: 59s}", valid: "rollout: {stepTimeout: 1m}"},
	{name: "rollout step timeout without a unit", field: "spec.rollout.stepTimeout",
		invalid: "rollout: {stepTimeout: '600'}", valid: "rollout: {stepTimeout: 1h30m}"},
	{name: "replica stuck threshold below a minute", field: "spec.replicaHealth.stuckAfter",
		invalid: "replicaHealth: {stuckAfter: 59s}", valid: "replicaHealth: {stuckAfter: 1m}"},
	{name: "replica stuck threshold without a unit", field: "spec.replicaHealth.stuckAfter",
		invalid: "replicaHealth: {stuckAfter: '600'}", valid: "replicaHealth: {stuckAfter: 2h}"},
	{name: "maintenance window schedule of four fields", field: "spec.maintenanceWindows[].schedule",
		invalid: "maintenanceWindows: [{schedule: '0 2 * 6', duration: 4h}]", valid: "maintenanceWindows: [{schedule: '0 2 * * 6', duration: 4h}]"},
	{name: "maintenance window longer than a week", field: "spec.maintenanceWindows[].duration",
		invalid: "maintenanceWindows: [{schedule: '0 2 * * 6', duration: 169h}]", valid: "maintenanceWindows: [{schedule: '0 2 * * 6', duration: 1h30m}]"},
	{name: "coordinator grace period zero", field: "spec.coordinatorTemplate.terminationGracePeriodSeconds",
		invalid: "coordinatorTemplate: {terminationGracePeriodSeconds: 0}", valid: "coordinatorTemplate: {terminationGracePeriodSeconds: 1}"},
	{name: "data grace period beyond a day", field: "spec.dataTemplate.terminationGracePeriodSeconds",
		invalid: "dataTemplate: {terminationGracePeriodSeconds: 86401}", valid: "dataTemplate: {terminationGracePeriodSeconds: 86400}"},
	{name: "sysctl init container without an image", field: "spec.dataTemplate.sysctlInitContainer",
		invalid: "dataTemplate: {sysctlInitContainer: {enabled: true}}",
		valid:   "dataTemplate: {sysctlInitContainer: {enabled: true, image: docker.io/library/busybox:1.37.0}}"},
	{name: "sysctl init container lowering max_map_count", field: "spec.dataTemplate.sysctlInitContainer.maxMapCount",
		invalid: "dataTemplate: {sysctlInitContainer: {maxMapCount: 65529}}", valid: "dataTemplate: {sysctlInitContainer: {maxMapCount: 65530}}"},
	{name: "replication mode override of no data instance", field: "spec.replicationModeOverrides[].instance",
		invalid: "replicationModeOverrides: [{instance: instance-1, mode: Async}]", valid: "replicationModeOverrides: [{instance: instance_1, mode: Async}]"},
	{name: "health check frequency zero", field: "spec.coordinatorSettings.instanceHealthCheckFrequencySeconds",
		invalid: "coordinatorSettings: {instanceHealthCheckFrequencySeconds: 0}", valid: "coordinatorSettings: {instanceHealthCheckFrequencySeconds: 1}"},
	{name: "instance down timeout zero", field: "spec.coordinatorSettings.instanceDownTimeoutSeconds",
		invalid: "coordinatorSettings: {instanceDownTimeoutSeconds: 0}", valid: "coordinatorSettings: {instanceDownTimeoutSeconds: 1}"},
	{name: "Sync and StrictSync mixed", field: "spec",
		invalid: "replicationModeOverrides: [{instance: instance_1, mode: StrictSync}]",
		valid:   "replicationMode: StrictSync\nreplicationModeOverrides: [{instance: instance_1, mode: Async}]"},
}

// transitionCases are rules on updates: the object is created with base, then updated.
var transitionCases = []struct {
	name, field, base, invalid, valid string
}{
	{name: "coordinator storage immutable", field: "spec.storage.coordinators",
		base: "storage: {coordinators: {libPVCSize: 1Gi}}", invalid: "storage: {coordinators: {libPVCSize: 2Gi}}",
		valid: "storage: {coordinators: {libPVCSize: 1Gi}}\ncoordinators: 5"},
	{name: "data storage immutable", field: "spec.storage.data",
		base: "storage: {data: {createLogStorageClaim: true}}", invalid: "storage: {data: {createLogStorageClaim: false}}",
		valid: "storage: {data: {createLogStorageClaim: true}, retentionPolicy: Delete}"},
	{name: "replication mode fixed", field: "spec",
		base: "replicationMode: Async", invalid: "replicationMode: Sync",
		valid: "replicationMode: Async\ncoordinatorSettings: {globalReadOnly: true}"},
	{name: "replication mode overrides fixed", field: "spec",
		base: "replicationModeOverrides: [{instance: instance_1, mode: Async}]", invalid: "replicationModeOverrides: [{instance: instance_1, mode: Sync}]",
		valid: "replicationModeOverrides: [{instance: instance_1, mode: Async}]\ndataInstances: 3"},
}

var spaces = regexp.MustCompile(`\s+`)

func squash(s string) string { return spaces.ReplaceAllString(strings.TrimSpace(s), " ") }

func TestAdmissionCELRules(t *testing.T) {
	installCRD(t)
	ns := newNamespace(t, "admission")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dryRun := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	var rejections []string

	for _, tc := range celCases {
		t.Run(tc.name, func(t *testing.T) {
			bad := mgcObject(t, ns, nameOr(tc.invalidName, "cel"), tc.invalid)
			_, err := mgcClient(ns).Create(ctx, bad, dryRun)
			if err == nil {
				t.Fatalf("%s: admission accepted %q", tc.field, tc.invalid+tc.invalidName)
			}
			rejections = append(rejections, squash(err.Error()))
			good := mgcObject(t, ns, nameOr(tc.validName, "cel"), tc.valid)
			if _, err := mgcClient(ns).Create(ctx, good, dryRun); err != nil {
				t.Fatalf("%s: admission rejected the valid neighbour %q: %v", tc.field, tc.valid+tc.validName, err)
			}
		})
	}
	for i, tc := range transitionCases {
		t.Run(tc.name, func(t *testing.T) {
			name := "transition-" + string(rune('a'+i))
			created, err := mgcClient(ns).Create(ctx, mgcObject(t, ns, name, tc.base), metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("create base: %v", err)
			}
			update := func(spec string) error {
				u := mgcObject(t, ns, name, spec)
				u.SetResourceVersion(created.GetResourceVersion())
				_, err := mgcClient(ns).Update(ctx, u, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
				return err
			}
			err = update(tc.invalid)
			if err == nil {
				t.Fatalf("%s: admission accepted the update to %q", tc.field, tc.invalid)
			}
			rejections = append(rejections, squash(err.Error()))
			if err := update(tc.valid); err != nil {
				t.Fatalf("%s: admission rejected the valid update %q: %v", tc.field, tc.valid, err)
			}
		})
	}

	// Every rule of the generated CRD must have rejected something above with its message.
	for _, rule := range crdRules(t) {
		found := false
		for _, r := range rejections {
			if strings.Contains(r, rule.message) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("CEL rule at %s (%q) has no case here that it rejects with its message %q", rule.path, rule.rule, rule.message)
		}
	}
}

func nameOr(name, def string) string {
	if name != "" {
		return name
	}
	return def
}

type crdRule struct{ path, rule, message string }

// crdRules walks the generated CRD's schema and returns every x-kubernetes-validations rule.
func crdRules(t *testing.T) []crdRule { return crdRulesAt(t, crdPath()) }

// crdRulesAt is crdRules of the generated CRD at path.
func crdRulesAt(t *testing.T, path string) []crdRule {
	t.Helper()
	var crd map[string]any
	if err := yaml.Unmarshal(readFile(t, path), &crd); err != nil {
		t.Fatal(err)
	}
	versions, _, _ := unstructured.NestedSlice(crd, "spec", "versions")
	var out []crdRule
	var walk func(path string, schema map[string]any)
	walk = func(path string, schema map[string]any) {
		if rules, ok := schema["x-kubernetes-validations"].([]any); ok {
			for _, r := range rules {
				m := r.(map[string]any)
				msg, _ := m["message"].(string)
				rule, _ := m["rule"].(string)
				out = append(out, crdRule{path: path, rule: rule, message: squash(msg)})
			}
		}
		if props, ok := schema["properties"].(map[string]any); ok {
			keys := make([]string, 0, len(props))
			for k := range props {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(path+"."+k, props[k].(map[string]any))
			}
		}
		if items, ok := schema["items"].(map[string]any); ok {
			walk(path+"[]", items)
		}
		if ap, ok := schema["additionalProperties"].(map[string]any); ok {
			walk(path+"{}", ap)
		}
	}
	for _, v := range versions {
		schema, _, _ := unstructured.NestedMap(v.(map[string]any), "schema", "openAPIV3Schema")
		walk("", schema)
	}
	if len(out) == 0 {
		t.Fatal("the generated CRD has no CEL rules")
	}
	return out
}

func TestAdmissionMaterializesEveryDefault(t *testing.T) {
	installCRD(t)
	ns := newNamespace(t, "defaults")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	got, err := mgcClient(ns).Create(ctx, mgcObject(t, ns, "minimal", "{}"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		t.Fatalf("minimal MemgraphCluster rejected: %v", err)
	}
	var admitted v1alpha1.MemgraphCluster
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(got.Object, &admitted); err != nil {
		t.Fatal(err)
	}
	want := (&v1alpha1.MemgraphCluster{}).Defaulted().Spec
	quantities := cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })
	if diff := cmp.Diff(want, admitted.Spec, quantities); diff != "" {
		t.Errorf("the API server's defaults differ from the Go constants (-Go +API server):\n%s", diff)
	}
	// The headline defaults, each against its constant by path, so a failure names the field.
	for path, want := range map[string]any{
		"coordinators":                                 int64(v1alpha1.DefaultCoordinators),
		"dataInstances":                                int64(v1alpha1.DefaultDataInstances),
		"image.repository":                             v1alpha1.DefaultImageRepository,
		"image.tag":                                    v1alpha1.DefaultImageTag,
		"image.pullPolicy":                             string(v1alpha1.DefaultImagePullPolicy),
		"secrets.name":                                 v1alpha1.DefaultSecretName,
		"secrets.licenseKey":                           v1alpha1.DefaultLicenseKey,
		"secrets.organizationKey":                      v1alpha1.DefaultOrganizationKey,
		"storage.retentionPolicy":                      string(v1alpha1.DefaultRetentionPolicy),
		"storage.coordinators.libPVCSize":              v1alpha1.DefaultPVCSize,
		"storage.data.logStorageAccessMode":            string(v1alpha1.DefaultAccessMode),
		"storage.data.createLogStorageClaim":           v1alpha1.DefaultCreateLogStorageClaim,
		"clusterDomain":                                v1alpha1.DefaultClusterDomain,
		"ports.bolt":                                   int64(v1alpha1.DefaultBoltPort),
		"ports.management":                             int64(v1alpha1.DefaultManagementPort),
		"ports.replication":                            int64(v1alpha1.DefaultReplicationPort),
		"ports.coordinator":                            int64(v1alpha1.DefaultCoordinatorPort),
		"dataTemplate.probes.startup.failureThreshold": int64(v1alpha1.DefaultDataStartupProbeFailureThreshold),
	} {
		v, found, err := unstructured.NestedFieldNoCopy(got.Object, append([]string{"spec"}, strings.Split(path, ".")...)...)
		if err != nil || !found {
			t.Errorf("spec.%s was not defaulted by the API server", path)
			continue
		}
		if v != want {
			t.Errorf("spec.%s = %v (%T), Go constant %v (%T)", path, v, v, want, want)
		}
	}
}

func TestCRDStatusSubresourceAndPrinterColumns(t *testing.T) {
	installCRD(t)
	e := needEnv(t)
	ns := newNamespace(t, "printer")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	created, err := mgcClient(ns).Create(ctx, mgcObject(t, ns, "shown", "{}"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// A status written through the main resource is dropped: the status subresource owns it.
	withStatus := created.DeepCopy()
	_ = unstructured.SetNestedField(withStatus.Object, "instance_9", "status", "main")
	updated, err := mgcClient(ns).Update(ctx, withStatus, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, found, _ := unstructured.NestedString(updated.Object, "status", "main"); found {
		t.Errorf("a PUT of the main resource changed status: the status subresource is not enabled")
	}
	status := map[string]any{
		"coordinators": int64(3), "dataInstances": int64(2), "main": "instance_0", "leader": "coordinator_2", "members": "4/5",
		"phase": "Running", "observedGeneration": updated.GetGeneration(),
		"version":             "docker.io/memgraph/memgraph:3.12.0",
		"coordinatorSettings": map[string]any{"globalReadOnly": true},
		"conditions": []any{
			condition("Ready", "True", "MainElected"),
			condition("Degraded", "True", "MembersDown"),
			condition("Converged", "False", "RegistrationInProgress"),
		},
	}
	updated.Object["status"] = status
	if _, err := mgcClient(ns).UpdateStatus(ctx, updated, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("write through the status subresource: %v", err)
	}
	out, err := e.Kubectl(ctx, "get", "mgc", "shown", "-n", ns)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("kubectl get mgc printed %q", out)
	}
	header, row := strings.Fields(lines[0]), strings.Fields(lines[1])
	wantHeader := []string{"NAME", "MAIN", "LEADER", "MEMBERS", "VERSION", "PHASE", "READY", "DEGRADED", "READ-ONLY", "AGE"}
	if diff := cmp.Diff(wantHeader, header); diff != "" {
		t.Errorf("printer columns (-want +got):\n%s", diff)
	}
	if len(row) == len(wantHeader) {
		if diff := cmp.Diff([]string{"shown", "instance_0", "coordinator_2", "4/5", "docker.io/memgraph/memgraph:3.12.0", "Running", "True", "True", "true"}, row[:9]); diff != "" {
			t.Errorf("printer column values (-want +got):\n%s", diff)
		}
	} else {
		t.Errorf("kubectl get mgc row %q does not match the header %q", lines[1], lines[0])
	}
}

func condition(typ, status, reason string) map[string]any {
	return map[string]any{
		"type": typ, "status": status, "reason": reason, "message": reason,
		"lastTransitionTime": "2026-01-01T00:00:00Z", "observedGeneration": int64(1),
	}
}

func TestApplyKustomizeManifests(t *testing.T) {
	installCRD(t)
	e := needEnv(t)
	mcCRDs, ok := sharedData("metacontroller-crds-v1.yaml")
	if !ok {
		t.Skipf("Metacontroller's CRDs are not at %s (a data file CI has, not part of the repository): "+
			"skipping only the `kubectl apply -k manifests/` check", mcCRDs)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := e.Kubectl(ctx, "apply", "--server-side", "-f", mcCRDs); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Kubectl(ctx, "wait", "--for=condition=Established", "--timeout=60s", "crd/compositecontrollers.metacontroller.k8s.io"); err != nil {
		t.Fatal(err)
	}
	out, err := e.Kubectl(ctx, "apply", "-k", repoPath("manifests"))
	if err != nil {
		t.Fatalf("kubectl apply -k manifests/ failed:\n%v", err)
	}
	t.Logf("kubectl apply -k manifests/:\n%s", out)
	// Applying again changes nothing stored. (kubectl reports a PodDisruptionBudget as
	// "configured" on every apply because its selector patch strategy is "replace"; what
	// matters is that no object's resourceVersion moves.)
	versions := func() string {
		out, err := e.Kubectl(ctx, "get", "-k", repoPath("manifests"), "-o",
			`jsonpath={range .items[*]}{.kind}/{.metadata.name}={.metadata.resourceVersion}{"\n"}{end}`)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	before := versions()
	if _, err := e.Kubectl(ctx, "apply", "-k", repoPath("manifests")); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, versions()); diff != "" {
		t.Errorf("a second kubectl apply -k changed stored objects (-before +after):\n%s", diff)
	}
	if _, err := e.Kubectl(ctx, "get", "compositecontroller", "memgraph-hooks"); err != nil {
		t.Errorf("the CompositeController is not there after apply -k: %v", err)
	}
}
