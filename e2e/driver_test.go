//go:build e2e

package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A sync hook that does not answer 200 changes nothing: no child, no status. Once it answers
// again, the pending spec change goes through.
func TestHookFailureChangesNothing(t *testing.T) {
	var failing atomic.Bool
	s := startScenarioWith(t, "hook-failure", func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if failing.Load() && r.URL.Path == "/sync" {
				http.Error(w, `{"error":"injected failure"}`, http.StatusInternalServerError)
				return
			}
			next.ServeHTTP(w, r)
		})
	})
	const name = "fail"
	s.create(name, "{}")
	s.declaredMembers(s.waitConverged(name, convergeTimeout), 3, 2)

	failing.Store(true)
	versions := childVersions(t, s.ns)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	before, err := s.get(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	since := time.Now()
	s.patchSpec(name, `{"dataInstances":3}`)
	err = eventually(ctx, 100*time.Millisecond, func() error {
		if n := len(s.mc.Stats().Snapshot().HookFailures(since)); n < 3 {
			return fmt.Errorf("%d failed sync calls so far", n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	after, err := s.get(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before.Object["status"], after.Object["status"]); diff != "" {
		t.Errorf("status changed while the hook failed (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(versions, childVersions(t, s.ns)); diff != "" {
		t.Errorf("children changed while the hook failed (-before +after):\n%s", diff)
	}
	if w := s.mc.Stats().Snapshot().ChildWrites(since); len(w) > 0 {
		t.Errorf("child writes while the hook failed: %v", w)
	}

	failing.Store(false)
	s.declaredMembers(s.waitConverged(name, convergeTimeout), 3, 3)
	s.assertNoMisuse()
}

// The suite's churn check has teeth: a hook that leaves status out of its volumeClaimTemplates
// (Metacontroller issue #566) costs a StatefulSet update on every sync, and the driver sees it.
func TestChurnCheckDetectsAtomicVolumeClaimTemplates(t *testing.T) {
	s := startScenarioWith(t, "churn-check", func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/sync" {
				next.ServeHTTP(w, r)
				return
			}
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, r)
			body := rec.Body.Bytes()
			if rec.Code == http.StatusOK {
				body = stripVCTStatus(t, body)
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(rec.Code)
			_, _ = w.Write(body)
		})
	})
	const name = "churn"
	s.create(name, "{}")
	s.waitConverged(name, convergeTimeout)
	versions := childVersions(t, s.ns)
	since := time.Now()
	for range 3 {
		n := s.mc.Stats().Snapshot().SyncsCompleted
		s.mc.Resync()
		s.waitSyncs(n, 1, 30*time.Second)
	}
	updates := 0
	for _, w := range s.mc.Stats().Snapshot().ChildWrites(since) {
		if w.Op == "update" && w.Kind == "StatefulSet" {
			updates++
		}
	}
	if updates < 3 {
		t.Errorf("%d StatefulSet updates across 3 resyncs of a hook without VCT status; the churn check would miss issue #566", updates)
	}
	// The API server absorbs the no-op PUT: resourceVersions stay, only the write is wasted.
	if diff := cmp.Diff(versions, childVersions(t, s.ns)); diff != "" {
		t.Logf("resourceVersions after the no-op updates (-before +after):\n%s", diff)
	}
}

// stripVCTStatus removes status from every volumeClaimTemplate of every StatefulSet child.
func stripVCTStatus(t *testing.T, body []byte) []byte {
	var resp map[string]any
	if err := json.Unmarshal(body, &resp); err != nil {
		t.Errorf("sync response is not JSON: %v", err)
		return body
	}
	children, _ := resp["children"].([]any)
	for _, c := range children {
		obj, _ := c.(map[string]any)
		if obj["kind"] != "StatefulSet" {
			continue
		}
		vcts, _, _ := unstructured.NestedSlice(obj, "spec", "volumeClaimTemplates")
		for _, v := range vcts {
			delete(v.(map[string]any), "status")
		}
		if len(vcts) > 0 {
			_ = unstructured.SetNestedSlice(obj, vcts, "spec", "volumeClaimTemplates")
		}
	}
	out, err := json.Marshal(resp)
	if err != nil {
		t.Errorf("re-encode: %v", err)
		return body
	}
	return out
}
