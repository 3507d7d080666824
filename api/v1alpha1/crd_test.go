package v1alpha1_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/internal/apitest"
	"sigs.k8s.io/yaml"
)

const crdPath = "../../manifests/crd/memgraph.com_memgraphclusters.yaml"

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
	if len(crd.Spec.Versions) != 1 || crd.Spec.Versions[0].Name != v1alpha1.Version {
		t.Fatalf("CRD versions %+v, want exactly %s", crd.Spec.Versions, v1alpha1.Version)
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

	raw, err := json.Marshal(apitest.MinimalCluster().Defaulted().Spec)
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
		v1alpha1.MsgClusterName, v1alpha1.MsgCoordinators, v1alpha1.MsgCoordinatorsMax, v1alpha1.MsgDataInstances, v1alpha1.MsgDataInstancesMax, v1alpha1.MsgImageRepository,
		v1alpha1.MsgImageTag, v1alpha1.MsgSecretKeys, v1alpha1.MsgClusterDomain, v1alpha1.MsgPortsDistinct, v1alpha1.MsgReservedLabels, v1alpha1.MsgReservedLabels,
		v1alpha1.MsgReservedEnv, v1alpha1.MsgReservedEnv, v1alpha1.MsgReservedArgs, v1alpha1.MsgReservedArgs, v1alpha1.MsgDataWAL, v1alpha1.MsgCoordinatorStorage, v1alpha1.MsgDataStorage,
		v1alpha1.MsgVolumeSize, v1alpha1.MsgVolumeSize, v1alpha1.MsgTLSSecretName, v1alpha1.MsgClusterSecretName, v1alpha1.MsgIntraClusterTLS, v1alpha1.MsgAuthSecretName, v1alpha1.MsgStepTimeout, v1alpha1.MsgStuckAfter, v1alpha1.MsgPreferredMain, v1alpha1.MsgPreferredDeclared, v1alpha1.MsgHibernateScale,
		v1alpha1.MsgGracePeriod, v1alpha1.MsgGracePeriod, v1alpha1.MsgSysctlImage, v1alpha1.MsgMaxMapCount, v1alpha1.MsgReplicationMix, v1alpha1.MsgReplicationFixed, v1alpha1.MsgOverrideInstance,
		v1alpha1.MsgFromBackupCreateOnly, v1alpha1.MsgFromBackupOneOf, v1alpha1.MsgFromBackupDestWithKey, v1alpha1.MsgFromBackupNeedsStore,
		// spec.backup.destination and spec.bootstrap.fromBackup.destination share the type
		v1alpha1.MsgS3Endpoint, v1alpha1.MsgS3Bucket, v1alpha1.MsgS3Prefix, v1alpha1.MsgS3Insecure, v1alpha1.MsgSecretReference, v1alpha1.MsgSecretReference,
		v1alpha1.MsgS3Endpoint, v1alpha1.MsgS3Bucket, v1alpha1.MsgS3Prefix, v1alpha1.MsgS3Insecure, v1alpha1.MsgSecretReference, v1alpha1.MsgSecretReference,
		v1alpha1.MsgSourceRangesType, v1alpha1.MsgSourceRange, v1alpha1.MsgHostnameInstance, v1alpha1.MsgHostnameForm,
		v1alpha1.MsgWindowSchedule, v1alpha1.MsgWindowDuration,
		// spec.coordinatorSettings and status.coordinatorSettings share the type
		v1alpha1.MsgInstanceDownTimeout, v1alpha1.MsgInstanceDownTimeout, v1alpha1.MsgHealthCheckFrequency, v1alpha1.MsgHealthCheckFrequency,
		v1alpha1.MsgRoleName, v1alpha1.MsgRoleBuiltin, v1alpha1.MsgPrivilegesAll, v1alpha1.MsgDatabases,
	}
	slices.Sort(messages)
	slices.Sort(goMessages)
	if diff := cmp.Diff(goMessages, messages); diff != "" {
		t.Errorf("CEL messages in the CRD differ from validate.go (-go +crd):\n%s", diff)
	}

	all := strings.Join(rules, "\n")
	for _, pattern := range []string{
		v1alpha1.ClusterNamePattern, v1alpha1.ClusterDomainPattern, v1alpha1.RepositoryTagPattern, v1alpha1.ImageTagPattern, v1alpha1.ImageDigestPattern,
		v1alpha1.ReservedArgsPattern, v1alpha1.WalArgPattern, v1alpha1.S3EndpointPattern, v1alpha1.S3BucketPattern, v1alpha1.ReservedEnvNamesInCEL, v1alpha1.PreferredMainPattern, "'" + v1alpha1.InstancePlaceholder + "'", "isCIDR(r)", v1alpha1.StepTimeoutPattern,
		v1alpha1.AuthNamePattern, v1alpha1.DatabaseNamePattern,
		fmt.Sprintf("duration(self) >= duration('%s')", v1alpha1.MinStepTimeout),
		fmt.Sprintf("duration(self) <= duration('%s')", v1alpha1.MaxStepTimeout),
		fmt.Sprintf("self <= %d", v1alpha1.MaxCoordinators), fmt.Sprintf("self <= %d", v1alpha1.MaxDataInstances),
		fmt.Sprintf("self >= %d && self <= %d", v1alpha1.MinGracePeriod, v1alpha1.MaxGracePeriod),
		fmt.Sprintf("self >= %d && self <= %d", v1alpha1.MinMaxMapCount, v1alpha1.MaxMaxMapCount),
		fmt.Sprintf("self >= %d", v1alpha1.MinSettingSeconds),
	} {
		if !strings.Contains(all, pattern) {
			t.Errorf("no CEL rule uses %q, which Validate uses", pattern)
		}
	}
	var inCEL []string
	for _, n := range v1alpha1.ReservedEnvNames {
		inCEL = append(inCEL, "'"+n+"'")
	}
	if got := strings.Join(inCEL, ", "); got != v1alpha1.ReservedEnvNamesInCEL {
		t.Errorf("reservedEnvNames %s differ from the CEL list %s", got, v1alpha1.ReservedEnvNamesInCEL)
	}
}

// The CRD refuses a status with more records than RecordOperations ever keeps, and no fewer.
func TestOperationsMaxItemsIsMaxOperations(t *testing.T) {
	ops := loadCRDSchema(t).Properties["status"].Properties["operations"]
	if ops.MaxItems == nil || *ops.MaxItems != v1alpha1.MaxOperations {
		t.Errorf("status.operations maxItems %v, want MaxOperations (%d)", ops.MaxItems, v1alpha1.MaxOperations)
	}
}
