//go:build e2e

package e2e_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// admissionEdges are specs on the edges of the CRD — explicit zeros and nulls, lengths, counts,
// ranges, required fields, duplicates — where the hook's Go validation (topology.Admit) and the
// API server must agree: both admit, storing the same spec, or both refuse.
var admissionEdges = []string{
	"{}",
	"coordinators: 0",
	"coordinators: null",
	"Coordinators: 5",
	"dataInstances: 0",
	"dataInstances: 128",
	"dataInstances: 129",
	"coordinators: 9",
	"coordinators: 11",
	"coordinators: 2147483647",
	"ports: {bolt: 0}",
	"ports: null",
	"clusterDomain: ''",
	"clusterDomain: " + strings.Repeat("a.", 126) + "a",
	"clusterDomain: " + strings.Repeat("a.", 126) + "ab",
	"image: {repository: ''}",
	"image: {repository: " + strings.Repeat("r", 256) + "}",
	"image: {tag: ''}",
	"image: {pullPolicy: ''}",
	"secrets: {name: ''}",
	"secrets: {name: null}",
	"storage: {retentionPolicy: ''}",
	"storage: {data: {libPVCSize: '0'}}",
	"storage: {data: {libPVCSize: 0}}",
	"storage: {coordinators: {logPVCSize: -1Gi}}",
	"storage: {data: {logPVCSize: 2.5}}",
	"storage: {data: {libPVCSize: 500Mi, createLogStorageClaim: false}}",
	"storage: {data: {libStorageAccessMode: ''}}",
	"dataTemplate: {probes: {startup: {failureThreshold: 0}}}",
	"dataTemplate: {probes: {startup: {failureThreshold: 3000000000}}}",
	"coordinatorTemplate: {labels: {team: null}}",
	"coordinatorTemplate: {extraArgs: ['" + strings.Repeat("x", 1025) + "']}",
	"dataTemplate: {extraEnv: [{name: A}, {name: A, value: x}]}",
	"dataTemplate: {extraEnv: [{value: x}]}",
	"dataTemplate: {topologySpreadConstraints: [{maxSkew: 1, whenUnsatisfiable: DoNotSchedule}]}",
	"dataTemplate: {topologySpreadConstraints: [{maxSkew: 1, whenUnsatisfiable: DoNotSchedule, topologyKey: zone}]}",
	"coordinatorTemplate: {tolerations: [" + strings.Repeat("{}, ", 64) + "{}]}",
	"coordinatorTemplate: {priorityClassName: " + strings.Repeat("p", 254) + "}",
	"dataTemplate: {resources: {limits: {memory: 1Gi}}}",
	"coordinatorSettings: {instanceHealthCheckFrequencySeconds: 0}",
	"coordinatorSettings: {instanceHealthCheckFrequencySeconds: 1, instanceDownTimeoutSeconds: 1}",
	"coordinatorSettings: {instanceDownTimeoutSeconds: 0}",
	"coordinatorSettings: {instanceDownTimeoutSeconds: -1}",
	"placement: null",
	"placement: {antiAffinity: null}",
	"placement: {antiAffinity: Required}",
	"placement: {antiAffinity: required}",
	"placement: {antiAffinity: ''}",
	"rollout: null",
	"rollout: {stepTimeout: ''}",
	"rollout: {stepTimeout: 168h}",
	"rollout: {stepTimeout: 168h1s}",
	"rollout: {stepTimeout: 90000ms}",
	"replicaHealth: {stuckAfter: 168h1s}",
	"replicaHealth: {stuckAfter: 90000ms}",
	"maintenanceWindows: [{schedule: '0  2 * * 6', duration: 1m}]",
	"maintenanceWindows: [{schedule: '0 2 * * 6 *', duration: 4h}]",
	"maintenanceWindows: [{schedule: '0 2 * * 6', duration: 59s}]",
	"rollout: {stepTimeout: " + strings.Repeat("1h", 17) + "}",
}

func TestGoAdmissionEqualsTheAPIServer(t *testing.T) {
	installCRD(t)
	ns := newNamespace(t, "admission-equal")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, spec := range admissionEdges {
		name := spec
		if len(name) > 60 {
			name = name[:60]
		}
		t.Run(name, func(t *testing.T) {
			obj := mgcObject(t, ns, "edge", spec)
			raw, err := json.Marshal(obj.Object)
			if err != nil {
				t.Fatal(err)
			}
			admitted, goErr := topology.Admit(raw)
			stored, apiErr := mgcClient(ns).Create(ctx, obj, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			if (goErr == nil) != (apiErr == nil) {
				t.Fatalf("the hook and the API server disagree:\n  hook:       %v\n  API server: %v", goErr, apiErr)
			}
			if goErr != nil {
				return
			}
			var fromGo map[string]any
			specJSON, _ := json.Marshal(admitted.Spec())
			_ = json.Unmarshal(specJSON, &fromGo)
			var fromAPI map[string]any
			specJSON, _ = json.Marshal(stored.Object["spec"])
			_ = json.Unmarshal(specJSON, &fromAPI)
			if diff := cmp.Diff(dropEmptyMaps(fromAPI), dropEmptyMaps(fromGo)); diff != "" {
				t.Errorf("the hook reads another spec than the API server stores (-API server +hook):\n%s", diff)
			}
		})
	}
}

// dropEmptyMaps removes empty objects: the typed spec, like the children rendered from it, cannot
// tell "labels: {}" from no labels.
func dropEmptyMaps(m map[string]any) map[string]any {
	for k, v := range m {
		if child, ok := v.(map[string]any); ok {
			if len(dropEmptyMaps(child)) == 0 {
				delete(m, k)
			}
		}
	}
	return m
}
