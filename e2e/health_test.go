//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// A replica's pod is deleted while the node is cordoned, so that its replacement stays Pending
// (Unschedulable): throughout, `kubectl get mgc` and status.main keep showing the MAIN, Ready stays
// True, and Degraded names the replica and why; once the node is schedulable again the pod comes
// back and every member is up.
func TestReplicaPodDeletedKeepsTheMain(t *testing.T) {
	s := startScenario(t, "health-replica")
	const name = "hr"
	s.create(name, "{}")
	u := s.waitConverged(name, convergeTimeout)
	mainName, _, _ := unstructured.NestedString(u.Object, "status", "main")
	if mainName == "" {
		t.Fatal("converged without status.main")
	}
	replica, replicaPod := "instance_1", topology.DataSetName(name)+"-1"
	if mainName == "instance_1" {
		replica, replicaPod = "instance_0", topology.DataSetName(name)+"-0"
	}
	host := fmt.Sprintf("%s.%s.%s.svc.%s", replicaPod, topology.DataSetName(name), s.ns, v1alpha1.DefaultClusterDomain)

	// Watch as a user would while the pod goes and comes back.
	var (
		mu            sync.Mutex
		polls, kpolls int
		blanks        []string
	)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ctx.Err() == nil; i++ {
			got, err := s.get(ctx, name)
			if ctx.Err() != nil {
				return
			}
			mu.Lock()
			if err == nil {
				polls++
				if m, _, _ := unstructured.NestedString(got.Object, "status", "main"); m != mainName {
					blanks = append(blanks, fmt.Sprintf("status.main %q", m))
				}
			}
			mu.Unlock()
			if i%5 == 0 {
				out, err := testEnv.Kubectl(ctx, "get", "mgc", name, "-n", s.ns, "--no-headers", "-o", "custom-columns=MAIN:.status.main")
				if ctx.Err() != nil {
					return
				}
				mu.Lock()
				if err == nil {
					kpolls++
					if strings.TrimSpace(out) != mainName {
						blanks = append(blanks, "kubectl get mgc: "+strings.TrimSpace(out))
					}
				}
				mu.Unlock()
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()

	cordon(t, true)
	t.Cleanup(func() { cordon(t, false) })
	old := s.deletePod(replicaPod)
	s.waitStatus(name, "the replica's pod is not named down while the MAIN serves", convergeTimeout, func(u *unstructured.Unstructured) error {
		st, reason, msg := conditionStatus(u, string(v1alpha1.ConditionDegraded))
		if st != "True" || !strings.Contains(msg, replica+" (pod "+replicaPod) || !strings.Contains(msg, "Unschedulable") {
			return fmt.Errorf("Degraded=%s %s: %s", st, reason, msg)
		}
		if st, reason, msg := conditionStatus(u, string(v1alpha1.ConditionReady)); st != "True" {
			return fmt.Errorf("Ready=%s %s: %s", st, reason, msg)
		}
		if members, _, _ := unstructured.NestedString(u.Object, "status", "members"); members != "4/5" {
			return fmt.Errorf("status.members %q", members)
		}
		return nil
	})
	cordon(t, false)
	s.waitPodReplaced(replicaPod, old, host)
	s.waitStatus(name, "the cluster did not come back to every member up", convergeTimeout, func(u *unstructured.Unstructured) error {
		if st, reason, msg := conditionStatus(u, string(v1alpha1.ConditionDegraded)); st != "False" {
			return fmt.Errorf("Degraded=%s %s: %s", st, reason, msg)
		}
		if st, reason, msg := conditionStatus(u, string(v1alpha1.ConditionReady)); st != "True" {
			return fmt.Errorf("Ready=%s %s: %s", st, reason, msg)
		}
		return nil
	})
	stop()
	<-done

	mu.Lock()
	defer mu.Unlock()
	if polls < 3 || kpolls < 1 {
		t.Fatalf("only %d reads and %d kubectl runs while the pod was replaced", polls, kpolls)
	}
	if len(blanks) > 0 {
		t.Errorf("%d of %d reads did not show MAIN %s: %q", len(blanks), polls+kpolls, mainName, blanks)
	}
	s.assertNoMisuse()
}

// A cluster whose license Secret does not exist says so, naming it with its namespace; once the
// Secret is created, it converges.
func TestMissingLicenseSecretIsNamed(t *testing.T) {
	s := startScenario(t, "health-license")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := testEnv.Client.CoreV1().Secrets(s.ns).Delete(ctx, licenseSecretName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	const name = "nolicense"
	s.create(name, "{}")
	want := fmt.Sprintf("Secret %s/%s (spec.secrets.name", s.ns, licenseSecretName)
	s.waitStatus(name, "the missing license Secret is not named", convergeTimeout, func(u *unstructured.Unstructured) error {
		if st, reason, msg := conditionStatus(u, string(v1alpha1.ConditionConverged)); st != "False" ||
			reason != string(v1alpha1.ReasonSecretMissing) || !strings.Contains(msg, want) {
			return fmt.Errorf("Converged=%s %s: %s", st, reason, msg)
		}
		return nil
	})
	createLicenseSecret(t, s.ns)
	s.waitConverged(name, convergeTimeout)
}
