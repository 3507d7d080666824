package v1alpha1_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/internal/apitest"
)

// An absent or null field gets the CRD's default, exactly as Defaulted gives it in Go.
func TestAdmitDefaultsAbsentAndNullFields(t *testing.T) {
	want := apitest.MinimalCluster().Defaulted().Spec
	for name, spec := range map[string]string{
		"no spec":     `null`,
		"empty spec":  `{}`,
		"null counts": `{"coordinators":null,"dataInstances":null,"ports":null,"storage":{"data":null}}`,
	} {
		t.Run(name, func(t *testing.T) {
			mc, err := v1alpha1.Admit(apitest.ParentJSON("default", spec))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, mc.Spec, apitest.Quantities); diff != "" {
				t.Errorf("admitted spec differs from Defaulted() (-want +got):\n%s", diff)
			}
		})
	}
}

// An explicit zero is judged as written, the way the API server judges it: it is not a default.
// Each case is refused with the rule's own message, and its absent neighbour is admitted.
func TestAdmitJudgesExplicitZeros(t *testing.T) {
	for _, tc := range []struct{ name, spec, want string }{
		{"zero coordinators", `{"coordinators":0}`, v1alpha1.MsgCoordinators},
		{"zero data instances", `{"dataInstances":0}`, v1alpha1.MsgDataInstances},
		{"zero port", `{"ports":{"bolt":0}}`, "ports.bolt must be at least 1"},
		{"zero probe period", `{"coordinatorTemplate":{"probes":{"liveness":{"periodSeconds":0}}}}`,
			"coordinatorTemplate.probes.liveness.periodSeconds must be at least 1"},
		{"empty cluster domain", `{"clusterDomain":""}`, v1alpha1.MsgClusterDomain},
		{"empty repository", `{"image":{"repository":""}}`, "image.repository must not be empty"},
		{"empty tag", `{"image":{"tag":""}}`, v1alpha1.MsgImageTag},
		{"empty pull policy", `{"image":{"pullPolicy":""}}`, "image.pullPolicy must be Always, IfNotPresent or Never"},
		{"empty secret name", `{"secrets":{"name":""}}`, "secrets.name must not be empty"},
		{"empty retention policy", `{"storage":{"retentionPolicy":""}}`, "storage.retentionPolicy must be Retain or Delete"},
		{"empty anti-affinity", `{"placement":{"antiAffinity":""}}`, "placement.antiAffinity must be Required, Preferred or None"},
		{"zero volume", `{"storage":{"data":{"libPVCSize":"0"}}}`, v1alpha1.MsgVolumeSize},
		{"zero volume as a number", `{"storage":{"coordinators":{"logPVCSize":0}}}`, v1alpha1.MsgVolumeSize},
		{"empty preferred MAIN", `{"preferredMain":""}`, "preferredMain must not be empty"},
		{"zero data grace period", `{"dataTemplate":{"terminationGracePeriodSeconds":0}}`, v1alpha1.MsgGracePeriod},
		{"zero coordinator grace period", `{"coordinatorTemplate":{"terminationGracePeriodSeconds":0}}`, v1alpha1.MsgGracePeriod},
		{"zero max map count", `{"dataTemplate":{"sysctlInitContainer":{"maxMapCount":0}}}`, v1alpha1.MsgMaxMapCount},
		{"empty sysctl image", `{"dataTemplate":{"sysctlInitContainer":{"image":""}}}`,
			"dataTemplate.sysctlInitContainer.image must not be empty"},
		{"sysctl enabled without image", `{"dataTemplate":{"sysctlInitContainer":{"enabled":true}}}`, v1alpha1.MsgSysctlImage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := v1alpha1.Admit(apitest.ParentJSON("default", tc.spec))
			if diff := cmp.Diff([]string{tc.want}, apitest.MessagesOf(t, err)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			var invalid *v1alpha1.ValidationError
			if c != nil || !errors.As(err, &invalid) || invalid.Namespace != "default" || invalid.Name != "memgraph" {
				t.Errorf("Admit = %v, %#v: want no Cluster and an error naming default/memgraph", c, err)
			}
		})
	}
	mc, err := v1alpha1.Admit(apitest.ParentJSON("default", `{"storage":{"data":{"createLogStorageClaim":false}}}`))
	if err != nil || *mc.Spec.Storage.Data.CreateLogStorageClaim {
		t.Errorf("an explicit false must stay false: %v, %v", err, mc)
	}
}

// The rest of the schema and the metadata, as the API server checks them.
func TestAdmitRefusesWhatTheAPIServerRefuses(t *testing.T) {
	for _, tc := range []struct{ name, namespace, spec, want string }{
		{"huge data instance count", "default", `{"dataInstances":2147483647}`, v1alpha1.MsgDataInstancesMax},
		{"huge cluster domain", "default", `{"clusterDomain":"` + strings.Repeat("a", 400<<10) + `"}`,
			"clusterDomain must be at most 253 characters long, got 409600"},
		{"uppercase namespace", "Default", `{}`, v1alpha1.MsgNamespace},
		{"long namespace", strings.Repeat("n", 64), `{}`, v1alpha1.MsgNamespace},
		{"missing required field", "default",
			`{"dataTemplate":{"topologySpreadConstraints":[{"maxSkew":1,"whenUnsatisfiable":"DoNotSchedule"}]}}`,
			"dataTemplate.topologySpreadConstraints[0].topologyKey is required"},
		{"duplicate env by name", "default", `{"dataTemplate":{"extraEnv":[{"name":"A"},{"name":"A","value":"x"}]}}`,
			"dataTemplate.extraEnv[1] duplicates item 0: the list's items must be unique by name"},
		{"fractional size", "default", `{"storage":{"data":{"logPVCSize":2.5}}}`,
			"storage.data.logPVCSize must be an integer or a string, got a number"},
		{"too many tolerations", "default", `{"coordinatorTemplate":{"tolerations":[` + strings.Repeat(`{},`, 64) + `{}]}}`,
			"coordinatorTemplate.tolerations must have at most 64 items, got 65"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := v1alpha1.Admit(apitest.ParentJSON(tc.namespace, tc.spec))
			if diff := cmp.Diff([]string{tc.want}, apitest.MessagesOf(t, err)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if err != nil && len(err.Error()) > 2048 {
				t.Errorf("the error repeats the input: %d bytes", len(err.Error()))
			}
		})
	}
}

// Type errors and out-of-range numbers are named by their path before any rule is judged.
func TestAdmitNamesTypeErrors(t *testing.T) {
	for _, tc := range []struct{ spec, want string }{
		{`{"coordinators":"3"}`, "spec.coordinators has the wrong type: got a JSON string, want an integer"},
		{`{"coordinators":2.5}`, "spec.coordinators must be a 32-bit integer, got number 2.5"},
		{`{"dataTemplate":{"probes":{"startup":{"failureThreshold":1e300}}}}`,
			"spec.dataTemplate.probes.startup.failureThreshold must be a 32-bit integer, got number 1e300"},
		{`{"coordinatorTemplate":{"probes":{"startup":{"periodSeconds":3000000000}}}}`,
			"spec.coordinatorTemplate.probes.startup.periodSeconds must be a 32-bit integer, got number 3000000000"},
	} {
		_, err := v1alpha1.Admit(apitest.ParentJSON("default", tc.spec))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("v1alpha1.Admit(%s) = %v, want an error containing %q", tc.spec, err, tc.want)
		}
	}
}

// A map or list far over its limit is reported once, and many bad entries by a bounded count.
func TestAdmitBoundsItsReport(t *testing.T) {
	spec, _ := json.Marshal(map[string]any{"coordinatorTemplate": map[string]any{"labels": labelValues(100000)}})
	_, err := v1alpha1.Admit(apitest.ParentJSON("default", string(spec)))
	if diff := cmp.Diff([]string{"coordinatorTemplate.labels must have at most 64 entries, got 100000"}, apitest.MessagesOf(t, err)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	long := make([]string, 40)
	for i := range long {
		long[i] = strings.Repeat("x", 2000)
	}
	spec, _ = json.Marshal(map[string]any{"dataTemplate": map[string]any{"extraArgs": long}})
	_, err = v1alpha1.Admit(apitest.ParentJSON("default", string(spec)))
	if got := apitest.MessagesOf(t, err); len(got) != v1alpha1.MaxSchemaViolations+1 || got[v1alpha1.MaxSchemaViolations] != "and 20 more violations" {
		t.Errorf("got %d violations, want %d and a count of the rest: %q", len(got), v1alpha1.MaxSchemaViolations+1, got)
	}
}

func labelValues(n int) map[string]any {
	out := map[string]any{}
	for k, v := range labels(n) {
		out[k] = v
	}
	return out
}

// The admitted cluster renders exactly like the Go fixture it stands for.
func TestAdmitEveryKnobRoundTrips(t *testing.T) {
	raw, err := json.Marshal(apitest.EveryKnob())
	if err != nil {
		t.Fatal(err)
	}
	mc, err := v1alpha1.Admit(raw)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(apitest.EveryKnob().Defaulted().Spec, mc.Spec, apitest.Quantities); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
