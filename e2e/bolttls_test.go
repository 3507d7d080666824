//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/internal/pki"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/bolt"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// spec.tls end to end: until its Secret exists the cluster is Ready=False SecretMissing and
// the Pods cannot serve; once it exists, every Pod serves Bolt only over TLS with the Secret's
// pair (the simulated Pods read it through their own volume and flags, as Memgraph would) and
// the hook, reading ca.crt through Metacontroller, converges the cluster over TLS. The
// StatefulSets then stay untouched across resyncs, and no byte of the Secret shows in the hook's
// log or the cluster's status.
func TestBoltTLSEndToEnd(t *testing.T) {
	s := startScenario(t, "bolt-tls")
	const name, secretName = "tlsc", "tlsc-bolt"
	s.create(name, "tls: {secretName: "+secretName+"}")

	ctx, cancel := context.WithTimeout(context.Background(), convergeTimeout)
	defer cancel()
	err := eventually(ctx, 200*time.Millisecond, func() error {
		u, err := s.get(ctx, name)
		if err != nil {
			return err
		}
		if status, reason, msg := conditionStatus(u, string(v1alpha1.ConditionReady)); status != "False" || reason != string(v1alpha1.ReasonSecretMissing) || !strings.Contains(msg, "does not exist") {
			return fmt.Errorf("Ready=%s %s: %s", status, reason, msg)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("without its Secret the cluster should be Ready=False SecretMissing: %v", err)
	}
	if q := s.world.Queries(); len(q) != 0 {
		t.Errorf("the hook dialled Memgraph without the TLS Secret: %+v", q)
	}

	ca, err := pki.NewAuthority("tlsc bolt CA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	domain := fmt.Sprintf("%s.svc.%s", s.ns, v1alpha1.DefaultClusterDomain)
	pair, err := ca.Issue(pki.Leaf{CommonName: name, Server: true, Client: true, Validity: time.Hour, DNSNames: []string{
		"*." + topology.CoordinatorSetName(name) + "." + domain, "*." + topology.DataSetName(name) + "." + domain,
	}})
	if err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: secretName, Namespace: s.ns},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{"tls.crt": pair.CertPEM, "tls.key": pair.KeyPEM, "ca.crt": ca.CertPEM},
	}
	if _, err := testEnv.Client.CoreV1().Secrets(s.ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	mgc := s.waitConverged(name, convergeTimeout)
	s.declaredMembers(mgc, 3, 2)

	// The coordinators answer only over TLS.
	pool := bolt.NewPool(bolt.PoolOptions{Resolver: s.world})
	defer pool.Close()
	trust, err := memgraph.NewBoltTLS(ca.CertPEM)
	if err != nil {
		t.Fatal(err)
	}
	leader := topology.Network{Cluster: name, Namespace: s.ns, ClusterDomain: v1alpha1.DefaultClusterDomain,
		Ports: topology.Ports{Bolt: v1alpha1.DefaultBoltPort}}.Coordinator(topology.FirstCoordinatorID).BoltServer
	if _, err := pool.Client(leader).ShowInstances(ctx); memgraph.KindOf(err) != memgraph.KindUnreachable {
		t.Errorf("a plaintext SHOW INSTANCES on %s: %v, want unreachable", leader, err)
	}
	if _, err := pool.WithTLS(trust).Client(leader).ShowInstances(ctx); err != nil {
		t.Errorf("SHOW INSTANCES over TLS on %s: %v", leader, err)
	}

	for _, set := range []string{topology.CoordinatorSetName(name), topology.DataSetName(name)} {
		sts, err := testEnv.Dynamic.Resource(stsGVR).Namespace(s.ns).Get(ctx, set, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		containers, _, _ := unstructured.NestedSlice(sts.Object, "spec", "template", "spec", "containers")
		args, _, _ := unstructured.NestedStringSlice(containers[0].(map[string]any), "args")
		if !strings.Contains(strings.Join(args, " "), "--bolt-cert-file="+topology.BoltCertFile+" --bolt-key-file="+topology.BoltKeyFile) {
			t.Errorf("%s runs %v, without the Bolt TLS flags", set, args)
		}
	}
	s.assertNoChurn(3)
	s.assertNoMisuse()

	final, err := s.get(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	status := fmt.Sprint(final.Object["status"])
	for what, pemBytes := range map[string][]byte{"ca.crt": ca.CertPEM, "tls.crt": pair.CertPEM, "tls.key": pair.KeyPEM} {
		body := strings.Split(string(pemBytes), "\n")[1]
		if strings.Contains(s.hookLog.String(), body) || strings.Contains(status, body) {
			t.Errorf("the Secret's %s shows in the hook's log or the status", what)
		}
	}
}
