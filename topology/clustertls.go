package topology

import (
	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// Intra-cluster TLS inside the pod. Memgraph 3.12 encrypts replication, management and Raft with
// mutual TLS when --cluster-cert-file, --cluster-key-file and --cluster-ca-file are all set (it
// refuses to start with only some of them; src/flags/general.cpp). From spec.tls.secretName the
// three files sit beside Bolt's pair at BoltTLSMountPath; from another Secret
// (spec.tls.clusterSecretName) they get a volume of their own.
const (
	ClusterTLSVolume    = "cluster-tls"
	ClusterTLSMountPath = "/etc/memgraph/cluster-ssl"

	// ArgClusterCertFile is the flag whose presence on a pod's command line says the pod runs
	// with intra-cluster TLS (the three flags come together).
	ArgClusterCertFile = "--cluster-cert-file="
)

// clusterTLSDir is where the pod finds the intra-cluster certificate, key and CA.
func clusterTLSDir(t *v1alpha1.TLS) string {
	if t.ClusterSecret() == t.SecretName {
		return BoltTLSMountPath
	}
	return ClusterTLSMountPath
}

// clusterTLSArgs are Memgraph's three intra-cluster TLS flags when spec.tls asks for it.
func clusterTLSArgs(t *v1alpha1.TLS) []string {
	if !t.IntraClusterOn() {
		return nil
	}
	dir := clusterTLSDir(t)
	return []string{
		ArgClusterCertFile + dir + "/" + BoltCertKey,
		"--cluster-key-file=" + dir + "/" + BoltKeyKey,
		"--cluster-ca-file=" + dir + "/" + BoltCAKey,
	}
}

// withClusterTLS mounts the intra-cluster certificate, key and CA: ca.crt joins Bolt's volume
// when both come from one Secret, else a volume of the cluster Secret's three keys. Items are
// listed so that a Secret missing one keeps the pod from starting rather than Memgraph refusing
// to; a projected Secret volume (no subPath) follows the Secret's updates.
func withClusterTLS(p corev1.PodSpec, t *v1alpha1.TLS) corev1.PodSpec {
	if !t.IntraClusterOn() {
		return p
	}
	ca := corev1.KeyToPath{Key: BoltCAKey, Path: BoltCAKey}
	if clusterTLSDir(t) == BoltTLSMountPath {
		for i := range p.Volumes {
			if v := &p.Volumes[i]; v.Name == BoltTLSVolume {
				v.Secret.Items = append(v.Secret.Items, ca)
			}
		}
		return p
	}
	p.Volumes = append(p.Volumes, corev1.Volume{Name: ClusterTLSVolume, VolumeSource: corev1.VolumeSource{
		Secret: &corev1.SecretVolumeSource{
			SecretName:  t.ClusterSecretName,
			Items:       []corev1.KeyToPath{{Key: BoltCertKey, Path: BoltCertKey}, {Key: BoltKeyKey, Path: BoltKeyKey}, ca},
			DefaultMode: ptr.To(boltTLSMode),
		},
	}})
	c := &p.Containers[0]
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: ClusterTLSVolume, MountPath: ClusterTLSMountPath, ReadOnly: true})
	return p
}
