package topology

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

const crdPath = "../manifests/crd/memgraph.com_memgraphclusters.yaml"

type crdSchema struct {
	Default     any                  `json:"default"`
	Properties  map[string]crdSchema `json:"properties"`
	Items       *crdSchema           `json:"items"`
	MaxItems    *int                 `json:"maxItems"`
	Validations []struct {
		Rule    string `json:"rule"`
		Message string `json:"message"`
	} `json:"x-kubernetes-validations"`
}

func loadCRDSchema(t *testing.T) crdSchema { return loadCRDSchemaAt(t, crdPath) }

// loadCRDSchemaAt is the openAPIV3Schema of the generated CRD at path.
func loadCRDSchemaAt(t *testing.T, path string) crdSchema {
	t.Helper()
	raw, err := os.ReadFile(filepath.FromSlash(path))
	if err != nil {
		t.Fatalf("read the generated CRD (make manifests): %v", err)
	}
	var crd struct {
		Spec struct {
			Versions []struct {
				Name   string `json:"name"`
				Schema struct {
					OpenAPIV3Schema crdSchema `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		t.Fatal(err)
	}
	if len(crd.Spec.Versions) != 1 || crd.Spec.Versions[0].Name != Version {
		t.Fatalf("CRD versions %+v, want exactly %s", crd.Spec.Versions, Version)
	}
	return crd.Spec.Versions[0].Schema.OpenAPIV3Schema
}

// applyDefaults is the API server's structural defaulting: a missing property with a default
// gets it, then defaulting descends into every present object.
func applyDefaults(v any, s crdSchema) {
	obj, ok := v.(map[string]any)
	if !ok {
		return
	}
	for name, prop := range s.Properties {
		if _, present := obj[name]; !present && prop.Default != nil {
			raw, _ := json.Marshal(prop.Default)
			var copied any
			_ = json.Unmarshal(raw, &copied)
			obj[name] = copied
		}
		if child, present := obj[name]; present {
			applyDefaults(child, prop)
		}
	}
}

// The CRD's crdSchema defaults, applied to an empty spec, give exactly what Defaulted gives in Go:
// every default is both a crdSchema default and a Go constant, with the same value.
func TestCRDDefaultsEqualGoDefaults(t *testing.T) {
	root := loadCRDSchema(t)
	fromSchema := map[string]any{}
	applyDefaults(fromSchema, root)

	raw, err := json.Marshal(minimalCluster().Defaulted().Spec)
	if err != nil {
		t.Fatal(err)
	}
	var fromGo any
	if err := json.Unmarshal(raw, &fromGo); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(fromGo, fromSchema["spec"]); diff != "" {
		t.Errorf("CRD schema defaults differ from Defaulted() (-go +crd):\n%s", diff)
	}
}

// Every CEL rule in the CRD has its Go twin with the identical message, and the rules use the
// very regular expressions Validate uses.
// celRules are the x-kubernetes-validations rules of a schema and their messages, at every depth.
func celRules(s crdSchema) (rules, messages []string) {
	for _, v := range s.Validations {
		rules = append(rules, v.Rule)
		messages = append(messages, v.Message)
	}
	children := make([]crdSchema, 0, len(s.Properties)+1)
	for _, p := range s.Properties {
		children = append(children, p)
	}
	if s.Items != nil {
		children = append(children, *s.Items)
	}
	for _, c := range children {
		r, m := celRules(c)
		rules, messages = append(rules, r...), append(messages, m...)
	}
	return rules, messages
}

func TestCRDRulesMatchGoValidation(t *testing.T) {
	rules, messages := celRules(loadCRDSchema(t))

	goMessages := []string{
		MsgClusterName, MsgCoordinators, MsgCoordinatorsMax, MsgDataInstances, MsgDataInstancesMax, MsgImageRepository,
		MsgImageTag, MsgSecretKeys, MsgClusterDomain, MsgPortsDistinct, MsgReservedLabels, MsgReservedLabels,
		MsgReservedEnv, MsgReservedEnv, MsgReservedArgs, MsgReservedArgs, MsgDataWAL, MsgCoordinatorStorage, MsgDataStorage,
		MsgVolumeSize, MsgVolumeSize, MsgTLSSecretName, MsgClusterSecretName, MsgIntraClusterTLS, MsgAuthSecretName, MsgStepTimeout, MsgStuckAfter, MsgPreferredMain, MsgPreferredDeclared, MsgHibernateScale,
		MsgGracePeriod, MsgGracePeriod, MsgSysctlImage, MsgMaxMapCount, MsgReplicationMix, MsgReplicationFixed, MsgOverrideInstance,
		MsgFromBackupCreateOnly, MsgFromBackupOneOf, MsgFromBackupDestWithKey, MsgFromBackupNeedsStore,
		// spec.backup.destination and spec.bootstrap.fromBackup.destination share the type
		MsgS3Endpoint, MsgS3Bucket, MsgS3Prefix, MsgS3Insecure, MsgSecretReference, MsgSecretReference,
		MsgS3Endpoint, MsgS3Bucket, MsgS3Prefix, MsgS3Insecure, MsgSecretReference, MsgSecretReference,
		MsgSourceRangesType, MsgSourceRange, MsgHostnameInstance, MsgHostnameForm,
		MsgWindowSchedule, MsgWindowDuration,
		// spec.coordinatorSettings and status.coordinatorSettings share the type
		MsgInstanceDownTimeout, MsgInstanceDownTimeout, MsgHealthCheckFrequency, MsgHealthCheckFrequency,
		MsgRoleName, MsgRoleBuiltin, MsgPrivilegesAll, MsgDatabases,
	}
	slices.Sort(messages)
	slices.Sort(goMessages)
	if diff := cmp.Diff(goMessages, messages); diff != "" {
		t.Errorf("CEL messages in the CRD differ from validate.go (-go +crd):\n%s", diff)
	}

	all := strings.Join(rules, "\n")
	for _, pattern := range []string{
		clusterNamePattern, clusterDomainPattern, repositoryTagPattern, imageTagPattern, imageDigestPattern,
		reservedArgsPattern, walArgPattern, s3EndpointPattern, s3BucketPattern, reservedEnvNamesInCEL, preferredMainPattern, "'" + InstancePlaceholder + "'", "isCIDR(r)", stepTimeoutPattern,
		authNamePattern, databaseNamePattern,
		fmt.Sprintf("duration(self) >= duration('%s')", minStepTimeout),
		fmt.Sprintf("duration(self) <= duration('%s')", maxStepTimeout),
		fmt.Sprintf("self <= %d", MaxCoordinators), fmt.Sprintf("self <= %d", MaxDataInstances),
		fmt.Sprintf("self >= %d && self <= %d", minGracePeriod, maxGracePeriod),
		fmt.Sprintf("self >= %d && self <= %d", minMaxMapCount, maxMaxMapCount),
		fmt.Sprintf("self >= %d", minSettingSeconds),
	} {
		if !strings.Contains(all, pattern) {
			t.Errorf("no CEL rule uses %q, which Validate uses", pattern)
		}
	}
	var inCEL []string
	for _, n := range reservedEnvNames {
		inCEL = append(inCEL, "'"+n+"'")
	}
	if got := strings.Join(inCEL, ", "); got != reservedEnvNamesInCEL {
		t.Errorf("reservedEnvNames %s differ from the CEL list %s", got, reservedEnvNamesInCEL)
	}
}

// The CRD refuses a status with more records than RecordOperations ever keeps, and no fewer.
func TestOperationsMaxItemsIsMaxOperations(t *testing.T) {
	ops := loadCRDSchema(t).Properties["status"].Properties["operations"]
	if ops.MaxItems == nil || *ops.MaxItems != MaxOperations {
		t.Errorf("status.operations maxItems %v, want MaxOperations (%d)", ops.MaxItems, MaxOperations)
	}
}
