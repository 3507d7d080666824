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

	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// A replica's pod is deleted (the StatefulSet recreates it): throughout, `kubectl get mgc` and
// status.main keep showing the MAIN, which serves writes all along.
func TestReplicaPodDeletedKeepsTheMain(t *testing.T) {
	s := startScenario(t, "health-replica")
	const name = "hr"
	s.create(name, "{}")
	u := s.waitConverged(name, convergeTimeout)
	mainName, _, _ := unstructured.NestedString(u.Object, "status", "main")
	if mainName == "" {
		t.Fatal("converged without status.main")
	}
	replicaPod := topology.DataSetName(name) + "-1"
	if mainName == "instance_1" {
		replicaPod = topology.DataSetName(name) + "-0"
	}
	host := fmt.Sprintf("%s.%s.%s.svc.%s", replicaPod, topology.DataSetName(name), s.ns, topology.DefaultClusterDomain)

	// Watch as a user would while the pod goes and comes back.
	var (
		mu       sync.Mutex
		polls    int
		blanks   []string
		degraded bool
	)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			out, err := testEnv.Kubectl(ctx, "get", "mgc", name, "-n", s.ns, "--no-headers",
				"-o", "custom-columns=MAIN:.status.main,LEADER:.status.leader,MEMBERS:.status.members")
			got, getErr := s.get(ctx, name)
			if ctx.Err() != nil {
				return
			}
			mu.Lock()
			polls++
			if err == nil {
				if fields := strings.Fields(out); len(fields) < 1 || fields[0] != mainName {
					blanks = append(blanks, "kubectl get mgc: "+strings.TrimSpace(out))
				}
			}
			if getErr == nil {
				if m, _, _ := unstructured.NestedString(got.Object, "status", "main"); m != mainName {
					blanks = append(blanks, fmt.Sprintf("status.main %q", m))
				}
				if st, _, _ := conditionStatus(got, string(topology.ConditionDegraded)); st == "True" {
					degraded = true
				}
			}
			mu.Unlock()
			time.Sleep(100 * time.Millisecond)
		}
	}()

	old := s.deletePod(replicaPod)
	s.waitPodReplaced(replicaPod, old, host)
	s.waitStatus(name, "the cluster did not come back to every member up", convergeTimeout, func(u *unstructured.Unstructured) error {
		if st, reason, msg := conditionStatus(u, string(topology.ConditionDegraded)); st != "False" {
			return fmt.Errorf("Degraded=%s %s: %s", st, reason, msg)
		}
		if st, reason, msg := conditionStatus(u, string(topology.ConditionReady)); st != "True" {
			return fmt.Errorf("Ready=%s %s: %s", st, reason, msg)
		}
		return nil
	})
	stop()
	<-done

	mu.Lock()
	defer mu.Unlock()
	if polls < 5 {
		t.Fatalf("only %d polls while the pod was replaced", polls)
	}
	if len(blanks) > 0 {
		t.Errorf("%d of %d polls did not show MAIN %s: %q", len(blanks), polls, mainName, blanks)
	}
	t.Logf("%d polls, Degraded=True seen: %v", polls, degraded)
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
		if st, reason, msg := conditionStatus(u, string(topology.ConditionConverged)); st != "False" ||
			reason != string(topology.ReasonSecretMissing) || !strings.Contains(msg, want) {
			return fmt.Errorf("Converged=%s %s: %s", st, reason, msg)
		}
		return nil
	})
	createLicenseSecret(t, s.ns)
	s.waitConverged(name, convergeTimeout)
}
