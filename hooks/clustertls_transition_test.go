package hooks_test

import (
	"strings"
	"testing"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// rotateThroughGrace renews the Secret's leaf under its CA and walks the rotation to its end: the
// hook sees the new Secret (then meanwhile runs), the kubelet projects the files, the hook reloads
// each instance, and after the grace every instance once more.
func (h *harness) rotateThroughGrace(t *testing.T, b boltPKI, meanwhile func()) boltPKI {
	t.Helper()
	next := b.reissue(t)
	h.rotate(next)
	h.sync()
	meanwhile()
	h.advance(40 * time.Second)
	h.projected = next
	h.projectAll()
	h.sync()
	h.advance(planner.ProjectionGrace)
	h.sync()
	h.sync()
	return next
}

// clusterReloads are the hosts that received RELOAD INTRA_CLUSTER TLS since the log was reset.
func (h *harness) clusterReloads() []string {
	var hosts []string
	for _, q := range h.world.Queries() {
		if q.Text == memgraph.ReloadClusterTLSQuery {
			hosts = append(hosts, q.Host)
		}
	}
	return hosts
}

// A spec that turns intra-cluster TLS off while a certificate rotation is pending waits for
// hibernation (the pods keep running with it), and the rotation still reloads what the pods run:
// Bolt's certificate and the intra-cluster one, on every instance — Memgraph reloads the files
// the process started with, whatever the spec now says.
func TestIntraClusterTLSTurnedOffKeepsBeingReloadedUntilItRolls(t *testing.T) {
	h, b := newRotationHarness(t, 3, 2)
	h.bootstrap()
	h.assertConverged()

	h.world.ResetLog()
	next := h.rotateThroughGrace(t, b, func() {
		h.assertCondition(v1alpha1.ConditionConverged, "False", v1alpha1.ReasonCertificateRotating)
		h.spec["tls"] = map[string]any{"secretName": boltSecret, "intraCluster": false}
		h.sync()
		h.assertCondition(v1alpha1.ConditionUpdated, "False", v1alpha1.ReasonIntraClusterTLSNeedsHibernation)
	})
	// rotated, the rollout still held
	h.assertCondition(v1alpha1.ConditionConverged, "False", v1alpha1.ReasonIntraClusterTLSNeedsHibernation)
	h.assertServedEverywhere(next) // over Bolt and to the peers
	h.assertRotationRecorded()
	if got := len(h.clusterReloads()); got < 5 {
		t.Errorf("RELOAD INTRA_CLUSTER TLS reached %d instances, want every one of the 5: %v", got, h.clusterReloads())
	}
	for pod, st := range h.podStates {
		if !runsClusterTLS(st.args) {
			t.Errorf("%s was replaced by a pod without intra-cluster TLS while its peers run with it", pod)
		}
	}
	h.assertNoMisuse()
}

// The other way: a spec that turns intra-cluster TLS on while the pods run without it (the
// change waits for hibernation) sends RELOAD INTRA_CLUSTER TLS to none of them — Memgraph 3.12
// refuses it there ("key or certificate file is empty") — so a rotation reloads Bolt's
// certificate, ends, and chooses no restart the held rollout could never carry out.
func TestIntraClusterTLSTurnedOnSendsNoReloadThePodsCannotTake(t *testing.T) {
	h, b := newRotationHarness(t, 3, 2)
	h.spec["tls"] = map[string]any{"secretName": boltSecret, "intraCluster": false}
	h.bootstrap()
	h.assertConverged()
	h.spec["tls"] = map[string]any{"secretName": boltSecret} // intraCluster defaults to true
	h.sync()
	h.assertCondition(v1alpha1.ConditionUpdated, "False", v1alpha1.ReasonIntraClusterTLSNeedsHibernation)

	h.world.ResetLog()
	next := h.rotateThroughGrace(t, b, func() {})
	// rotated, the rollout still held
	h.assertCondition(v1alpha1.ConditionConverged, "False", v1alpha1.ReasonIntraClusterTLSNeedsHibernation)
	if got := h.clusterReloads(); len(got) > 0 {
		t.Errorf("RELOAD INTRA_CLUSTER TLS sent to pods running without intra-cluster TLS: %v", got)
	}
	want := next.pair.Cert.SerialNumber.String()
	for _, host := range h.startedHosts() {
		if got := h.servedBy(host); got != want {
			t.Errorf("%s serves certificate %s over Bolt, want the Secret's %s", host, got, want)
		}
	}
	h.assertRotationRecorded()
	h.assertNoMisuse()
}

// assertRotationRecorded checks that the StatefulSets record the Secret's content as reloaded on
// every instance and no restart for it: the rotation ended (Converged names a held rollout first,
// so it cannot tell).
func (h *harness) assertRotationRecorded() {
	h.t.Helper()
	for _, c := range h.lastResp.Children {
		if c["kind"] != "StatefulSet" {
			continue
		}
		a, _ := c["metadata"].(map[string]any)["annotations"].(map[string]any)
		seen, _ := a[topology.AnnotationCertificateSeen].(string)
		stamp, _, _ := strings.Cut(seen, "@")
		if stamp == "" || a[topology.AnnotationCertificateReloaded] != stamp || a[topology.AnnotationCertificateRestart] != nil {
			h.t.Errorf("%s records seen %q, reloaded %v, restart %v: want the content recorded as reloaded, and no restart",
				c["metadata"].(map[string]any)["name"], seen, a[topology.AnnotationCertificateReloaded], a[topology.AnnotationCertificateRestart])
		}
	}
}

// startedHosts are the hosts whose instances the harness started.
func (h *harness) startedHosts() []string {
	var hosts []string
	for host := range h.started {
		hosts = append(hosts, host)
	}
	return hosts
}
