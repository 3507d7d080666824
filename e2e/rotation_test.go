//go:build e2e

package e2e_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/internal/pki"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// A TLS Secret renewed in the API server reaches every Pod's files a while later (the pod
// simulator projects it as the kubelet does), and the hook has every instance serve it without
// a restart: the cluster stays Converged and serving between, and ends Converged with the new
// certificate on every member, no Pod replaced and no process restarted.
func TestCertificateRotationEndToEnd(t *testing.T) {
	s := startScenarioOpts(t, "cert-rotation", scenarioOptions{projectionGrace: 15 * time.Second})
	const name, secretName = "rot", "rot-tls"
	ca, err := pki.NewAuthority("rot CA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	domain := fmt.Sprintf("%s.svc.%s", s.ns, v1alpha1.DefaultClusterDomain)
	issue := func() pki.Pair {
		pair, err := ca.Issue(pki.Leaf{CommonName: name, Server: true, Client: true, Validity: time.Hour, DNSNames: []string{
			"*." + topology.CoordinatorSetName(name) + "." + domain, "*." + topology.DataSetName(name) + "." + domain,
		}})
		if err != nil {
			t.Fatal(err)
		}
		return pair
	}
	first := issue()
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: secretName, Namespace: s.ns},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{"tls.crt": first.CertPEM, "tls.key": first.KeyPEM, "ca.crt": ca.CertPEM},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	secrets := testEnv.Client.CoreV1().Secrets(s.ns)
	if _, err := secrets.Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	s.create(name, "tls: {secretName: "+secretName+"}")
	s.waitConverged(name, convergeTimeout)
	before := len(s.pods.Events())

	renewed := issue()
	secret.Data["tls.crt"], secret.Data["tls.key"] = renewed.CertPEM, renewed.KeyPEM
	if _, err := secrets.Update(ctx, secret, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	n := topology.Network{Cluster: name, Namespace: s.ns, ClusterDomain: v1alpha1.DefaultClusterDomain}
	var hosts []string
	for i := range 3 {
		hosts = append(hosts, n.Coordinator(topology.FirstCoordinatorID+i).Host)
	}
	for i := range 2 {
		hosts = append(hosts, n.DataInstance(topology.FirstDataOrdinal+i).Host)
	}
	err = eventually(ctx, 500*time.Millisecond, func() error {
		for _, host := range hosts {
			conn, err := tls.Dial("tcp", s.world.Resolve(host+":7687"), &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // reads the served certificate only
			if err != nil {
				return err
			}
			served := conn.ConnectionState().PeerCertificates[0].SerialNumber
			conn.Close()
			if served.Cmp(renewed.Cert.SerialNumber) != 0 {
				return fmt.Errorf("%s still serves certificate %s", host, served)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("the renewed certificate was not served everywhere: %v", err)
	}
	s.waitConverged(name, time.Minute)
	for _, ev := range s.pods.Events()[before:] {
		if ev.What != "projected the changed TLS Secret" {
			t.Errorf("during the rotation the pod simulator recorded %s: %s (only projections expected)", ev.Host, ev.What)
		}
	}
	if !strings.Contains(s.hookLog.String(), "reloaded the TLS certificates") {
		t.Error("the hook logged no reload")
	}
	s.assertNoMisuse()
}
