//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
)

var (
	mgcGVR = v1alpha1.GroupVersion.WithResource(v1alpha1.Resource)
	crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	stsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}
	svcGVR = schema.GroupVersionResource{Version: "v1", Resource: "services"}

	crdOnce sync.Once
	crdErr  error
)

// crdPath is the generated CRD the topology package writes into manifests/.
func crdPath() string {
	return repoPath("manifests", "crd", "memgraph.com_memgraphclusters.yaml")
}

// installCRD applies the MemgraphCluster CRD once and waits until it is served.
func installCRD(t *testing.T) {
	t.Helper()
	e := needEnv(t)
	crdOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, crdErr = e.Kubectl(ctx, "apply", "-f", crdPath()); crdErr != nil {
			return
		}
		_, crdErr = e.Kubectl(ctx, "wait", "--for=condition=Established", "--timeout=60s",
			"crd/"+v1alpha1.Resource+"."+v1alpha1.Group)
		if crdErr == nil {
			crdErr = eventually(ctx, 100*time.Millisecond, func() error {
				_, err := e.Dynamic.Resource(mgcGVR).Namespace("default").List(ctx, metav1.ListOptions{})
				return err
			})
		}
	})
	if crdErr != nil {
		t.Fatalf("install CRD: %v", crdErr)
	}
}

func mgcClient(namespace string) dynamic.ResourceInterface {
	return testEnv.Dynamic.Resource(mgcGVR).Namespace(namespace)
}

// newNamespace creates a namespace for one test and deletes it afterwards.
func newNamespace(t *testing.T, name string) string {
	t.Helper()
	e := needEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := e.CreateNamespace(ctx, name); err != nil {
		t.Fatalf("namespace %s: %v", name, err)
	}
	createLicenseSecret(t, name)
	t.Cleanup(func() {
		_ = e.Client.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	return name
}

// licenseSecretName is spec.secrets.name's default: the Secret every pod's license comes from.
const licenseSecretName = "memgraph-secrets"

// createLicenseSecret creates the license Secret a MemgraphCluster names by default in namespace
// (the hook names it in the status when it does not exist); one already there is kept.
func createLicenseSecret(t *testing.T, namespace string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: licenseSecretName, Namespace: namespace},
		StringData: map[string]string{"MEMGRAPH_ENTERPRISE_LICENSE": "e2e-license", "MEMGRAPH_ORGANIZATION_NAME": "e2e"}}
	if _, err := needEnv(t).Client.CoreV1().Secrets(namespace).Create(ctx, secret, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("license Secret in %s: %v", namespace, err)
	}
}

// fromYAML parses one object.
func fromYAML(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
		t.Fatalf("parse %q: %v", doc, err)
	}
	return &unstructured.Unstructured{Object: obj}
}

// mgcObject is a MemgraphCluster named name in namespace with the given spec YAML.
func mgcObject(t *testing.T, namespace, name, spec string) *unstructured.Unstructured {
	t.Helper()
	u := fromYAML(t, "spec:\n"+indent(spec, "  "))
	if u.Object["spec"] == nil {
		u.Object["spec"] = map[string]any{}
	}
	u.SetAPIVersion(v1alpha1.APIVersion)
	u.SetKind(v1alpha1.Kind)
	u.SetNamespace(namespace)
	u.SetName(name)
	return u
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n") + "\n"
}

// eventually polls check until it succeeds or ctx ends, returning the last error.
func eventually(ctx context.Context, interval time.Duration, check func() error) error {
	var last error
	for {
		if last = check(); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %v)", ctx.Err(), last)
		case <-time.After(interval):
		}
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// sharedData locates a file under ../shared/data relative to the repository (a data file CI
// has and a clone does not); ok is false when it is absent.
func sharedData(name string) (string, bool) {
	path := filepath.Join(repoRoot, "..", "shared", "data", name)
	_, err := os.Stat(path)
	return path, err == nil
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
