package topology

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/internal/apitest"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// tlsView is what a pod template says about TLS: the TLS flags on Memgraph's command line and,
// for each TLS volume, its Secret, the keys it projects and where it is mounted.
type tlsView struct {
	Args    []string
	Volumes map[string]string // volume name → "secret key,key,… at mountPath"
}

func tlsOf(p corev1.PodSpec) tlsView {
	v := tlsView{Volumes: map[string]string{}}
	c := p.Containers[0]
	for _, a := range c.Args {
		if strings.HasPrefix(a, "--bolt-cert") || strings.HasPrefix(a, "--bolt-key") || strings.HasPrefix(a, "--cluster-") {
			v.Args = append(v.Args, a)
		}
	}
	for _, vol := range p.Volumes {
		if vol.Secret == nil {
			continue
		}
		var keys []string
		for _, item := range vol.Secret.Items {
			keys = append(keys, item.Key)
		}
		i := slices.IndexFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == vol.Name })
		if i < 0 {
			v.Volumes[vol.Name] = vol.Secret.SecretName + " " + strings.Join(keys, ",") + " unmounted"
			continue
		}
		v.Volumes[vol.Name] = vol.Secret.SecretName + " " + strings.Join(keys, ",") + " at " + c.VolumeMounts[i].MountPath
	}
	return v
}

// Both roles get the same TLS flags and mounts: Bolt's pair, and with intra-cluster TLS (on by
// default) the three --cluster-* flags, whose files come from spec.tls.secretName beside Bolt's
// or from spec.tls.clusterSecretName in a volume of their own.
func TestClusterTLSRender(t *testing.T) {
	boltOnly := []string{"--bolt-cert-file=/etc/memgraph/ssl/tls.crt", "--bolt-key-file=/etc/memgraph/ssl/tls.key"}
	cases := []struct {
		name string
		tls  *v1alpha1.TLS
		want tlsView
	}{
		{"no spec.tls", nil, tlsView{Volumes: map[string]string{}}},
		{"one Secret for both", &v1alpha1.TLS{SecretName: "bolt"}, tlsView{
			Args: append(slices.Clone(boltOnly), "--cluster-cert-file=/etc/memgraph/ssl/tls.crt",
				"--cluster-key-file=/etc/memgraph/ssl/tls.key", "--cluster-ca-file=/etc/memgraph/ssl/ca.crt"),
			Volumes: map[string]string{BoltTLSVolume: "bolt tls.crt,tls.key,ca.crt at /etc/memgraph/ssl"},
		}},
		{"clusterSecretName naming the same Secret", &v1alpha1.TLS{SecretName: "bolt", ClusterSecretName: "bolt"}, tlsView{
			Args: append(slices.Clone(boltOnly), "--cluster-cert-file=/etc/memgraph/ssl/tls.crt",
				"--cluster-key-file=/etc/memgraph/ssl/tls.key", "--cluster-ca-file=/etc/memgraph/ssl/ca.crt"),
			Volumes: map[string]string{BoltTLSVolume: "bolt tls.crt,tls.key,ca.crt at /etc/memgraph/ssl"},
		}},
		{"a Secret of its own", &v1alpha1.TLS{SecretName: "bolt", ClusterSecretName: "peers"}, tlsView{
			Args: append(slices.Clone(boltOnly), "--cluster-cert-file=/etc/memgraph/cluster-ssl/tls.crt",
				"--cluster-key-file=/etc/memgraph/cluster-ssl/tls.key", "--cluster-ca-file=/etc/memgraph/cluster-ssl/ca.crt"),
			Volumes: map[string]string{
				BoltTLSVolume:    "bolt tls.crt,tls.key at /etc/memgraph/ssl",
				ClusterTLSVolume: "peers tls.crt,tls.key,ca.crt at /etc/memgraph/cluster-ssl",
			},
		}},
		{"intraCluster false", &v1alpha1.TLS{SecretName: "bolt", ClusterSecretName: "peers", IntraCluster: ptr.To(false)}, tlsView{
			Args:    boltOnly,
			Volumes: map[string]string{BoltTLSVolume: "bolt tls.crt,tls.key at /etc/memgraph/ssl"},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mc := apitest.MinimalCluster()
			mc.Spec.TLS = tc.tls
			c := admit(t, mc)
			for role, spec := range map[string]corev1.PodSpec{
				"coordinator": coordinatorPodSpec(c.mc, c.Network()),
				"data":        dataPodSpec(c.mc),
			} {
				if diff := cmp.Diff(tc.want, tlsOf(spec)); diff != "" {
					t.Errorf("%s pod (-want +got):\n%s", role, diff)
				}
			}
		})
	}
}

// The Secrets a cluster names: clusterSecretName joins them only when it is another Secret.
func TestClusterTLSSecretNamed(t *testing.T) {
	for _, tc := range []struct {
		tls  *v1alpha1.TLS
		want []string
	}{
		{&v1alpha1.TLS{SecretName: "bolt"}, []string{"memgraph-secrets", "bolt"}},
		{&v1alpha1.TLS{SecretName: "bolt", ClusterSecretName: "bolt"}, []string{"memgraph-secrets", "bolt"}},
		{&v1alpha1.TLS{SecretName: "bolt", ClusterSecretName: "peers"}, []string{"memgraph-secrets", "bolt", "peers"}},
		{&v1alpha1.TLS{SecretName: "bolt", ClusterSecretName: "peers", IntraCluster: ptr.To(false)}, []string{"memgraph-secrets", "bolt"}},
	} {
		mc := apitest.MinimalCluster()
		mc.Spec.TLS = tc.tls
		var got []string
		for _, s := range admit(t, mc).NamedSecrets() {
			got = append(got, s.Name)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%+v: NamedSecrets (-want +got):\n%s", *tc.tls, diff)
		}
	}
}
