package hooks_test

import (
	"context"
	"crypto/tls"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/internal/pki"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// newRotationHarness is a TLS harness (Bolt and intra-cluster) whose instances read their
// certificate, key and CA from files, which the test projects into each pod as the kubelet
// would (projectAll), with Memgraph's own rules for reading them (sim.TLSFiles).
func newRotationHarness(t *testing.T, coordinators, data int) (*harness, boltPKI) {
	t.Helper()
	h, b := newTLSHarness(t, coordinators, data)
	h.tlsDir, h.projected = t.TempDir(), b
	return h, b
}

// tlsFiles are the files pod's flags name (topology's mount path, one directory per pod): the
// --cluster-* ones only when its memgraph container runs with them.
func (h *harness) tlsFiles(host, pod string) sim.TLSFiles {
	f := h.tlsPaths(host)
	if st := h.podStates[pod]; st == nil || !runsClusterTLS(st.args) {
		f.ClusterCert, f.ClusterKey, f.ClusterCA = "", "", ""
	}
	return f
}

// tlsPaths are where host's pod finds the projected Secret's files.
func (h *harness) tlsPaths(host string) sim.TLSFiles {
	if h.tlsDir == "" {
		return sim.TLSFiles{}
	}
	dir := filepath.Join(h.tlsDir, host)
	return sim.TLSFiles{BoltCert: filepath.Join(dir, "tls.crt"), BoltKey: filepath.Join(dir, "tls.key"),
		ClusterCert: filepath.Join(dir, "tls.crt"), ClusterKey: filepath.Join(dir, "tls.key"), ClusterCA: filepath.Join(dir, "ca.crt")}
}

// projectTo writes the projected Secret into host's pod, as the kubelet does when it mounts the
// volume or after the Secret changed.
func (h *harness) projectTo(host string) {
	f := h.tlsPaths(host)
	h.must(os.MkdirAll(filepath.Dir(f.BoltCert), 0o700))
	for path, data := range map[string][]byte{f.BoltCert: h.projected.pair.CertPEM, f.BoltKey: h.projected.pair.KeyPEM, f.ClusterCA: h.projected.caPEM()} {
		h.must(os.WriteFile(path, data, 0o600))
	}
}

// projectAll is the kubelet catching up with the Secret in every pod.
func (h *harness) projectAll() {
	for host := range h.started {
		h.projectTo(host)
	}
}

// rotate replaces the Secret's content with b (the kubelet projects it later: projectAll).
func (h *harness) rotate(b boltPKI) {
	h.secrets["default/"+boltSecret] = b.secret("default", boltSecret)
}

// servedBy is the serial of the certificate a new handshake with host's Bolt port sees.
func (h *harness) servedBy(host string) string {
	conn, err := tls.Dial("tcp", h.world.Resolve(host+":7687"), &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // reads the served certificate only
	h.must(err)
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].SerialNumber.String()
}

// assertServedEverywhere checks that every declared instance serves b's leaf, over Bolt and to
// its peers.
func (h *harness) assertServedEverywhere(b boltPKI) {
	h.t.Helper()
	coordinators, data := h.replicas()
	n := h.network()
	var members []topology.Member
	for i := range coordinators {
		members = append(members, n.Coordinator(topology.FirstCoordinatorID+i).Member)
	}
	for i := range data {
		members = append(members, n.DataInstance(topology.FirstDataOrdinal+i).Member)
	}
	want := b.pair.Cert.SerialNumber.String()
	for _, m := range members {
		if got := h.servedBy(m.Host); got != want {
			h.t.Errorf("%s serves certificate %s over Bolt, want the Secret's %s", m.Name, got, want)
		}
		if got := h.world.PeerCertificate(m.Host); got == nil || got.SerialNumber.String() != want {
			h.t.Errorf("%s presents another intra-cluster certificate than the Secret's %s", m.Name, want)
		}
	}
}

// writer is a client writing to the MAIN over TLS, as an application does: each write is
// replicated to the SYNC replicas over intra-cluster TLS before it is acknowledged.
type writer struct {
	h      *harness
	failed []string
	n      int
}

// write sends one CREATE to the current MAIN on a new connection and records a failure.
func (w *writer) write() {
	h := w.h
	main := h.world.Raft().Clusters[0].Main
	ordinal, _ := topology.ParseDataInstanceName(main)
	addr := h.world.Resolve(h.network().DataInstance(ordinal).Host + ":7687")
	drv, err := neo4j.NewDriverWithContext("bolt+ssc://"+addr, neo4j.NoAuth())
	h.must(err)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	defer func() { _ = drv.Close(ctx) }()
	w.n++
	if _, err := neo4j.ExecuteQuery(ctx, drv, "CREATE ()", nil, neo4j.EagerResultTransformer); err != nil {
		w.failed = append(w.failed, main+": "+err.Error())
	}
}

// syncUnderLoad syncs with writes before and after; with failOnRefusal, a Bolt write of the
// sync that failed fails the test.
func (h *harness) syncUnderLoad(w *writer, failOnRefusal bool) {
	h.t.Helper()
	w.write()
	h.sync()
	for _, op := range h.operations() {
		if failOnRefusal && strings.Contains(op, " "+string(v1alpha1.OperationFailed)+" ") {
			h.t.Errorf("a sync's Bolt write failed: %s", op)
		}
	}
	w.write()
}

func (w *writer) check(t *testing.T) {
	t.Helper()
	if len(w.failed) > 0 {
		t.Errorf("%d of %d writes failed: %s", len(w.failed), w.n, strings.Join(w.failed, "; "))
	}
}

// operations are status.operations' commands with their outcome and message.
func (h *harness) operations() []string {
	var out []string
	ops, _ := h.lastResp.Status["operations"].([]any)
	for _, o := range ops {
		op := o.(map[string]any)
		msg, _ := op["message"].(string)
		out = append(out, op["command"].(string)+" "+op["outcome"].(string)+" "+msg)
	}
	return out
}

// reissue is a new pair from b's CA (and CA bundle), valid for every member.
func (b boltPKI) reissue(t *testing.T) boltPKI {
	t.Helper()
	pair, err := b.ca.Issue(pki.Leaf{CommonName: "memgraph", Validity: time.Hour, Server: true, Client: true,
		DNSNames: []string{"*.memgraph-coordinator.default.svc.cluster.local", "*.memgraph-data.default.svc.cluster.local"}})
	if err != nil {
		t.Fatal(err)
	}
	b.pair = pair
	return b
}

// A leaf renewed under the same CA and then a CA rotated in three steps (both CAs trusted, the
// leaf from the new CA, the old CA dropped) are served without a pod restart, under a writer's
// load: each instance is reloaded once the kubelet has projected the files, proven by a new
// handshake, and every write succeeds — replication between instances (intra-cluster TLS) never
// meets a certificate its peer does not trust.
func TestCertificateRotationReloadsWithoutARestart(t *testing.T) {
	h, b := newRotationHarness(t, 3, 2)
	h.bootstrap()
	h.assertConverged()
	watch := h.watchRollout(false)
	w := &writer{h: h}

	renewed, next := b.reissue(t), newBoltPKI(t)
	both := b
	both.bundle = append(append([]byte{}, b.ca.CertPEM...), next.ca.CertPEM...)
	steps := []struct {
		name string
		next boltPKI
	}{
		{"leaf renewed", renewed},
		{"both CAs trusted", withPair(both, renewed.pair)},
		{"leaf from the new CA", withPair(both, next.pair)},
		{"old CA dropped", next},
	}

	for _, step := range steps {
		h.rotate(step.next)
		h.syncUnderLoad(w, true) // the kubelet has not projected it yet
		if _, reason, msg := h.condition(v1alpha1.ConditionConverged); reason != v1alpha1.ReasonCertificateRotating {
			t.Fatalf("%s, before the kubelet projects: Converged %s: %s, want %s", step.name, reason, msg, v1alpha1.ReasonCertificateRotating)
		}
		h.advance(40 * time.Second)
		h.projected = step.next
		h.projectAll()
		h.syncUnderLoad(w, true)
		h.assertServedEverywhere(step.next)
		h.advance(planner.ProjectionGrace)
		h.syncUnderLoad(w, true) // the last round: every instance reloads once more, the content is recorded
		h.syncUnderLoad(w, true)
		h.assertConverged()
		h.assertServedEverywhere(step.next)
		watch.observe(h)
	}
	w.check(t)
	watch.check(t)
	if len(h.replaced) > 0 {
		t.Errorf("pods were restarted although every reload worked: %v", h.replaced)
	}
	reloads := slices.DeleteFunc(h.operations(), func(op string) bool { return !strings.HasPrefix(op, "RELOAD") })
	if len(reloads) == 0 || !strings.Contains(strings.Join(reloads, "\n"), "RELOAD INTRA_CLUSTER TLS Succeeded on instance_") {
		t.Errorf("status.operations records no reload: %v", h.operations())
	}
	h.assertNoMisuse()
}

func withPair(b boltPKI, p pki.Pair) boltPKI {
	b.pair = p
	return b
}

// An instance that refuses the reload (its user lacks the RELOAD_TLS privilege) has the pods
// restarted instead, through the rollout: one pod at a time, the MAIN handed over before its pod
// goes, the leader last; every pod then serves the new certificate.
func TestRefusedReloadRestartsThePodsSafely(t *testing.T) {
	h, b := newRotationHarness(t, 3, 2)
	h.dataAuth = &sim.Auth{Username: authUser, Password: authPassword, Denied: []sim.Privilege{sim.PrivilegeReloadTLS}}
	h.spec["auth"] = map[string]any{"secretName": authSecret}
	h.secrets["default/"+authSecret] = authSecretObject(authUser, authPassword)
	h.bootstrap()
	h.assertConverged()
	watch := h.watchRollout(false)
	w := &writer{h: h}

	next := b.reissue(t)
	h.rotate(next)
	h.projected = next
	h.projectAll()
	h.syncUnderLoad(w, false)
	_, reason, msg := h.condition(v1alpha1.ConditionConverged)
	if reason != v1alpha1.ReasonCertificateRotating || !strings.Contains(msg, "refused to reload its certificate (You are not authorized") {
		t.Fatalf("Converged %s: %s, want %s naming Memgraph's refusal", reason, msg, v1alpha1.ReasonCertificateRotating)
	}
	h.rollOut(watch, 60)
	watch.check(t)
	if len(h.replaced) != 5 {
		t.Errorf("replaced %v, want every pod once", h.replaced)
	}
	h.assertServedEverywhere(next)
	h.assertNoMisuse()
}
