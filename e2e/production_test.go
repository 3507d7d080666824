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
	"github.com/memgraph-hooks/memgraph-hooks/hooks/backupcontroller"
	"github.com/memgraph-hooks/memgraph-hooks/internal/pki"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// TestProductionExampleAsWritten applies examples/production/ as its README says: the Secrets it
// names created first (the license and the store's credentials by the scenario, the hook's user
// and the Bolt certificate here), three nodes for its Required anti-affinity, then
// `kubectl apply -f examples/production/`. The cluster converges over TLS with one pod of each
// role per node, its data instances' --memory-limit from limits.memory, its backups' copy of the
// destination's credentials without a problem, the schedule in place and both users Ready on the
// MAIN, app's password generated into app-credentials.
func TestProductionExampleAsWritten(t *testing.T) {
	s, _ := startUserScenario(t, "production")
	const name = "memgraph"
	addNode(t, "production-b")
	addNode(t, "production-c")
	s.productionSecrets(name)
	dir := repoPath("examples", "production")
	start := time.Now()
	s.kubectl("apply", "-f", dir)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, _ = testEnv.Kubectl(ctx, "delete", "-f", dir, "-n", s.ns, "--wait=false")
	})

	mgc := s.waitConverged(name, convergeTimeout)
	t.Logf("the production cluster converged %s after kubectl apply", time.Since(start).Round(time.Millisecond))
	s.declaredMembers(mgc, 3, 3)
	for typ, want := range map[string]string{"Ready": "True", string(v1alpha1.ConditionHighlyAvailable): "True"} {
		if st, reason, msg := conditionStatus(mgc, typ); st != want {
			t.Errorf("%s = %s %s: %s", typ, st, reason, msg)
		}
	}
	s.assertProductionPods(name)
	for _, user := range []string{"app", "dashboards"} {
		s.waitUser(user, "Ready", ready)
	}
	t.Logf("both users Ready %s after kubectl apply", time.Since(start).Round(time.Millisecond))
	creds := s.secretData("app-credentials")
	if !strings.HasPrefix(creds["uri"], "bolt+s://"+topology.WriteServiceName(name)+".") || creds["password"] == "" {
		t.Errorf("app-credentials: uri %q, password set %v", creds["uri"], creds["password"] != "")
	}
	s.waitFor(time.Minute, func() error {
		agent, err := testEnv.Client.CoreV1().Secrets(s.ns).Get(context.Background(), name+"-backup-agent", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p := agent.Annotations[backupcontroller.AnnotationAccessProblems]; p != "" || len(agent.Data[v1alpha1.S3AccessKeyIDKey]) == 0 {
			return fmt.Errorf("the backups' copy of the destination: problems %q, access key copied %v", p, len(agent.Data[v1alpha1.S3AccessKeyIDKey]) > 0)
		}
		return nil
	})
	if _, err := scheduleClient(s.ns).Get(context.Background(), "memgraph-nightly", metav1.GetOptions{}); err != nil {
		t.Errorf("the nightly schedule: %v", err)
	}
	s.assertNoMisuse()
}

// productionSecrets creates the Secrets examples/production/README.md has a user create besides
// the license and the store's credentials: the hook's Memgraph user and the Bolt certificate.
func (s *backupScenario) productionSecrets(name string) {
	s.t.Helper()
	ca, err := pki.NewAuthority(name+" bolt CA", time.Hour)
	if err != nil {
		s.t.Fatal(err)
	}
	domain := fmt.Sprintf("%s.svc.%s", s.ns, v1alpha1.DefaultClusterDomain)
	pair, err := ca.Issue(pki.Leaf{CommonName: name, Server: true, Client: true, Validity: time.Hour, DNSNames: []string{
		"*." + topology.CoordinatorSetName(name) + "." + domain, "*." + topology.DataSetName(name) + "." + domain,
	}})
	if err != nil {
		s.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, secret := range []*corev1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Name: "memgraph-admin", Namespace: s.ns},
			StringData: map[string]string{"username": "memgraph-hooks", "password": "production-e2e-password"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "memgraph-bolt-tls", Namespace: s.ns}, Type: corev1.SecretTypeTLS,
			Data: map[string][]byte{"tls.crt": pair.CertPEM, "tls.key": pair.KeyPEM, "ca.crt": ca.CertPEM}},
	} {
		if _, err := testEnv.Client.CoreV1().Secrets(s.ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
			s.t.Fatal(err)
		}
	}
}

// assertProductionPods checks what the example's spec puts into the pods: each role's pods on
// three nodes, Bolt TLS, and the data instances' --memory-limit at 80% of their 32Gi limit.
func (s *backupScenario) assertProductionPods(name string) {
	s.t.Helper()
	for set, flag := range map[string]string{
		topology.CoordinatorSetName(name): "--bolt-cert-file=" + topology.BoltCertFile,
		topology.DataSetName(name):        "--memory-limit=26214",
	} {
		sts, err := testEnv.Dynamic.Resource(stsGVR).Namespace(s.ns).Get(context.Background(), set, metav1.GetOptions{})
		if err != nil {
			s.t.Fatal(err)
		}
		containers, _, _ := unstructured.NestedSlice(sts.Object, "spec", "template", "spec", "containers")
		args, _, _ := unstructured.NestedStringSlice(containers[0].(map[string]any), "args")
		if !strings.Contains(strings.Join(args, " "), flag) {
			s.t.Errorf("%s runs %v, without %s", set, args, flag)
		}
		nodes := map[string]bool{}
		pods := s.podsOf(set)
		for _, pod := range pods {
			nodes[s.podNode(pod)] = true
		}
		if len(pods) != 3 || len(nodes) != 3 {
			s.t.Errorf("%s: pods %v on %d nodes, want 3 on 3 (antiAffinity: Required)", set, pods, len(nodes))
		}
	}
}

func (s *backupScenario) secretData(name string) map[string]string {
	s.t.Helper()
	secret, err := testEnv.Client.CoreV1().Secrets(s.ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		s.t.Fatal(err)
	}
	out := map[string]string{}
	for k, v := range secret.Data {
		out[k] = string(v)
	}
	return out
}
