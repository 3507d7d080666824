//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// claims lists the namespace's PVC names that are not being deleted.
func (s *scenario) claims() []string {
	s.t.Helper()
	return slices.Sorted(maps.Keys(s.claimUIDs()))
}

func claimsOfPod(all []string, pod string) []string {
	var out []string
	for _, c := range all {
		if strings.HasSuffix(c, "-"+pod) {
			out = append(out, c)
		}
	}
	return out
}

// waitWorkloadsGone waits until no Pod and no StatefulSet of the cluster is left.
func (s *scenario) waitWorkloadsGone(name string) {
	s.t.Helper()
	if err := s.waitLeft(name, true); err != nil {
		s.t.Fatalf("cluster %s's workloads were not garbage-collected: %v", name, err)
	}
}

// waitLeft waits up to a minute until no Pod of the cluster (and, with statefulSets, no
// StatefulSet of the namespace) is left.
func (s *scenario) waitLeft(name string, statefulSets bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return eventually(ctx, 200*time.Millisecond, func() error {
		pods, err := testEnv.Client.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{LabelSelector: v1alpha1.LabelInstance + "=" + name})
		if err != nil {
			return err
		}
		sets := 0
		if statefulSets {
			list, err := testEnv.Client.AppsV1().StatefulSets(s.ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return err
			}
			sets = len(list.Items)
		}
		if n := len(pods.Items) + sets; n > 0 {
			return fmt.Errorf("%d pods and %d StatefulSets left", len(pods.Items), sets)
		}
		return nil
	})
}

func TestStorageRetention(t *testing.T) {
	for _, policy := range []string{"Retain", "Delete"} {
		t.Run(policy, func(t *testing.T) {
			s := startScenario(t, "retention-"+strings.ToLower(policy))
			name := "keep"
			s.create(name, fmt.Sprintf("dataInstances: 3\nstorage: {retentionPolicy: %s}", policy))
			s.declaredMembers(s.waitConverged(name, convergeTimeout), 3, 3)
			all := s.claims()
			retiring := claimsOfPod(all, topology.DataSetName(name)+"-2")
			if len(retiring) == 0 {
				t.Fatalf("no claims of %s-2 among %v", topology.DataSetName(name), all)
			}

			s.patchSpec(name, `{"dataInstances":2}`)
			s.declaredMembers(s.waitConverged(name, convergeTimeout), 3, 2)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			err := eventually(ctx, 200*time.Millisecond, func() error {
				left := claimsOfPod(s.claims(), topology.DataSetName(name)+"-2")
				switch {
				case policy == "Retain" && len(left) != len(retiring):
					return fmt.Errorf("scale-down deleted claims under Retain: %v left of %v", left, retiring)
				case policy == "Delete" && len(left) > 0:
					return fmt.Errorf("claims %v still there after scale-down under Delete", left)
				}
				return nil
			})
			if err != nil {
				t.Error(err)
			}

			if err := mgcClient(s.ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			s.waitWorkloadsGone(name)
			var want []string
			if policy == "Retain" {
				want = all
			}
			err = eventually(ctx, 200*time.Millisecond, func() error {
				if diff := cmp.Diff(want, s.claims()); diff != "" {
					return fmt.Errorf("claims after deleting the cluster (-want +got):\n%s", diff)
				}
				return nil
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
}
