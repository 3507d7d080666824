package topology

import (
	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// Bolt TLS inside the pod: the Secret's pair at the HA chart's path, readable by Memgraph's
// group only (fsGroup), and the two flags that make Memgraph accept Bolt only over TLS.
const (
	BoltTLSVolume    = "bolt-tls"
	BoltTLSMountPath = "/etc/memgraph/ssl"
	BoltCertKey      = corev1.TLSCertKey       // tls.crt
	BoltKeyKey       = corev1.TLSPrivateKeyKey // tls.key
	BoltCAKey        = "ca.crt"
	BoltCertFile     = BoltTLSMountPath + "/" + BoltCertKey
	BoltKeyFile      = BoltTLSMountPath + "/" + BoltKeyKey

	// boltTLSMode is 0440, written out because the API server would default it to 0644 and the
	// StatefulSet would then differ from what the hook returns on every sync.
	boltTLSMode int32 = 0o440
)

// boltTLSArgs are Memgraph's Bolt TLS flags when spec.tls is set.
func boltTLSArgs(t *v1alpha1.TLS) []string {
	if t == nil {
		return nil
	}
	return []string{"--bolt-cert-file=" + BoltCertFile, "--bolt-key-file=" + BoltKeyFile}
}

// withBoltTLS mounts the TLS Secret's certificate and key into the pod's container (ca.crt only
// joins them for intra-cluster TLS, withClusterTLS: Bolt's server does not read it). Items are listed so that a Secret missing either key keeps the
// pod from starting rather than starting Memgraph without its certificate.
func withBoltTLS(p corev1.PodSpec, t *v1alpha1.TLS) corev1.PodSpec {
	if t == nil {
		return p
	}
	p.Volumes = append(p.Volumes, corev1.Volume{Name: BoltTLSVolume, VolumeSource: corev1.VolumeSource{
		Secret: &corev1.SecretVolumeSource{
			SecretName:  t.SecretName,
			Items:       []corev1.KeyToPath{{Key: BoltCertKey, Path: BoltCertKey}, {Key: BoltKeyKey, Path: BoltKeyKey}},
			DefaultMode: ptr.To(boltTLSMode),
		},
	}})
	c := &p.Containers[0]
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: BoltTLSVolume, MountPath: BoltTLSMountPath, ReadOnly: true})
	return p
}
