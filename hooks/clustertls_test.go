package hooks_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/hooks"
	"github.com/memgraph-hooks/memgraph-hooks/internal/pki"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

const clusterSecret = "memgraph-cluster-tls"

var memberNames = []string{"*.memgraph-coordinator.default.svc.cluster.local", "*.memgraph-data.default.svc.cluster.local"}

// The intra-cluster certificate must serve every member both ways: a Secret that cannot is a
// condition (Converged False, TLSCertificateMismatch, saying what is wrong), never a stop — Ready
// stays True, the members are registered and MAIN elected as with a good one — and fixing the
// Secret clears it.
func TestIntraClusterCertificateMismatch(t *testing.T) {
	for _, tc := range []struct {
		name string
		leaf pki.Leaf
		want string
	}{
		{"a server certificate only", pki.Leaf{DNSNames: memberNames, Server: true},
			"Secret default/memgraph-cluster-tls (spec.tls.clusterSecretName, intra-cluster TLS) has a tls.crt that does not verify " +
				"against its ca.crt as a client certificate (each instance is server and client to its peers: give it the usages " +
				"server auth and client auth): x509: certificate specifies an incompatible key usage"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, _ := newTLSHarness(t, 3, 2)
			h.spec["tls"] = map[string]any{"secretName": boltSecret, "clusterSecretName": clusterSecret}
			bad := newLeafPKI(t, tc.leaf)
			h.secrets["default/"+clusterSecret] = bad.secret("default", clusterSecret)
			h.sync() // pods come up
			h.sync() // registers them and elects MAIN, the mismatch notwithstanding
			msg := h.assertCondition(v1alpha1.ConditionConverged, "False", v1alpha1.ReasonTLSCertificateMismatch)
			if msg != tc.want {
				t.Errorf("message:\n%s\nwant:\n%s", msg, tc.want)
			}
			h.assertCondition(v1alpha1.ConditionReady, "True", v1alpha1.ReasonMainElected)
			for where, needle := range bad.secretMaterial() {
				if strings.Contains(msg, needle) {
					t.Errorf("the message quotes the Secret's %s", where)
				}
			}
			h.secrets["default/"+clusterSecret] = newBoltPKI(t).secret("default", clusterSecret)
			h.sync() // every instance is to load the new files: the hook reloads them once the kubelet has projected them
			h.assertCondition(v1alpha1.ConditionConverged, "False", v1alpha1.ReasonCertificateRotating)
			h.advance(planner.ProjectionGrace)
			h.sync()
			h.assertConverged()
		})
	}
}

// Memgraph 3.12 verifies an intra-cluster certificate against the CA alone, never against a host
// name (cluster_tls.cpp sets no name check; NuRaft's is not set either, raft_state.cpp 297–315):
// a clusterSecretName certificate for other names, or none, is no mismatch. The same
// certificate as spec.tls.secretName's is also the Bolt certificate the hook verifies each member
// by name with, and keeps that check.
func TestIntraClusterCertificateNamesAreCheckedForBoltOnly(t *testing.T) {
	for _, names := range [][]string{{"*.elsewhere.svc"}, nil} {
		h, _ := newTLSHarness(t, 3, 2)
		h.spec["tls"] = map[string]any{"secretName": boltSecret, "clusterSecretName": clusterSecret}
		h.secrets["default/"+clusterSecret] = newLeafPKI(t, pki.Leaf{DNSNames: names, Server: true, Client: true}).secret("default", clusterSecret)
		h.sync()
		h.sync()
		h.sync()
		h.assertConverged()
		h.assertNoMisuse()
	}

	h, _ := newTLSHarness(t, 3, 2)
	b := newBoltPKI(t, memberNames[0]) // Bolt's certificate, for the coordinators alone
	h.boltTLS = b.serverConfig(t)
	h.secrets["default/"+boltSecret] = b.secret("default", boltSecret)
	h.sync()
	h.sync()
	msg := h.assertCondition(v1alpha1.ConditionConverged, "False", v1alpha1.ReasonTLSCertificateMismatch)
	want := "Secret default/memgraph-bolt-tls (spec.tls.secretName, intra-cluster TLS) has a tls.crt whose names do not cover " +
		"memgraph-data-0.memgraph-data.default.svc.cluster.local, whose Bolt port the hook verifies by that name: give the " +
		"certificate the DNS names *.memgraph-coordinator.default.svc.cluster.local and *.memgraph-data.default.svc.cluster.local " +
		"(or each member's FQDN)"
	if msg != want {
		t.Errorf("message:\n%s\nwant:\n%s", msg, want)
	}
	h.assertCondition(v1alpha1.ConditionReady, "True", v1alpha1.ReasonMainElected)
}

// A missing intra-cluster Secret is the same condition. Turning intra-cluster TLS off (which
// asks nothing of that Secret) replaces no pod while they run with it — an instance with it and
// one without cannot talk — and says so; hibernating is not held by that, and on waking every pod
// runs without it.
func TestIntraClusterTLSTurnedOffThroughHibernation(t *testing.T) {
	h, _ := newTLSHarness(t, 3, 2)
	h.keepVolumes = true
	h.spec["tls"] = map[string]any{"secretName": boltSecret, "clusterSecretName": clusterSecret}
	h.sync()
	h.sync()
	msg := h.assertCondition(v1alpha1.ConditionConverged, "False", v1alpha1.ReasonSecretMissing)
	if want := "Secret default/memgraph-cluster-tls (spec.tls.clusterSecretName"; !strings.HasPrefix(msg, want) {
		t.Errorf("message %q, want it to start with %q", msg, want)
	}
	h.spec["tls"] = map[string]any{"secretName": boltSecret, "clusterSecretName": clusterSecret, "intraCluster": false}
	for range 3 {
		h.advance(5 * time.Second)
		h.sync()
	}
	h.assertCondition(v1alpha1.ConditionUpdated, "False", v1alpha1.ReasonIntraClusterTLSNeedsHibernation)
	h.assertCondition(v1alpha1.ConditionReady, "True", v1alpha1.ReasonMainElected)
	for pod, st := range h.podStates {
		if !runsClusterTLS(st.args) {
			t.Errorf("%s was replaced by a pod without intra-cluster TLS while its peers run with it", pod)
		}
	}

	h.spec["hibernate"] = true
	for i := 0; i < 30; i++ {
		h.advance(5 * time.Second)
		h.sync()
		if st, _, _ := h.condition(v1alpha1.ConditionHibernated); st == "True" {
			break
		}
	}
	h.assertCondition(v1alpha1.ConditionHibernated, "True", v1alpha1.ReasonHibernated)
	h.spec["hibernate"] = false
	for range 20 {
		h.advance(5 * time.Second)
		h.sync()
		if converged, _, _ := h.condition(v1alpha1.ConditionConverged); converged == "True" {
			break
		}
	}
	h.assertConverged()
	h.assertCondition(v1alpha1.ConditionUpdated, "True", v1alpha1.ReasonUpToDate)
	for pod, st := range h.podStates {
		if runsClusterTLS(st.args) {
			t.Errorf("%s woke with intra-cluster TLS, want without", pod)
		}
	}
	h.assertNoMisuse()
}

func runsClusterTLS(args []any) bool {
	for _, a := range args {
		if s, _ := a.(string); strings.HasPrefix(s, topology.ArgClusterCertFile) {
			return true
		}
	}
	return false
}

// The customize hook asks for the intra-cluster Secret beside the license and Bolt's, once when it
// is the same as Bolt's.
func TestCustomizeAsksForTheIntraClusterSecret(t *testing.T) {
	for _, tc := range []struct {
		tls  map[string]any
		want []any
	}{
		{map[string]any{"secretName": boltSecret}, []any{"memgraph-secrets", boltSecret}},
		{map[string]any{"secretName": boltSecret, "clusterSecretName": boltSecret}, []any{"memgraph-secrets", boltSecret}},
		{map[string]any{"secretName": boltSecret, "clusterSecretName": clusterSecret}, []any{"memgraph-secrets", boltSecret, clusterSecret}},
		{map[string]any{"secretName": boltSecret, "clusterSecretName": clusterSecret, "intraCluster": false}, []any{"memgraph-secrets", boltSecret}},
	} {
		parent := validParent()
		parent["spec"].(map[string]any)["tls"] = tc.tls
		code, body := serve(t, hooks.NewHandler(hooks.Config{Connector: unreachable{}}), http.MethodPost, "/customize",
			mustJSON(t, map[string]any{"parent": parent}))
		if code != http.StatusOK {
			t.Fatalf("status %d: %s", code, body)
		}
		var resp struct{ RelatedResources []map[string]any }
		if err := json.Unmarshal([]byte(body), &resp); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, resp.RelatedResources[1]["names"]); diff != "" {
			t.Errorf("%v: Secret names (-want +got):\n%s", tc.tls, diff)
		}
	}
}
