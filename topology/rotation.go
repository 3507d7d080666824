package topology

import (
	"crypto/sha256"
	"encoding/hex"

	appsv1 "k8s.io/api/apps/v1"
)

// AnnotationCertificateRestart restarts the pods for a certificate that could not be reloaded.
// Its value is a CertificateStamp. On a StatefulSet's metadata it records that a pass chose the
// restart for that Secret content (RenderCertificateRestart); on both pod templates it is the
// restart itself (WithCertificateRestart): a new template revision, which the rollout rolls one
// pod at a time with the MAIN handed over first, as for any template change. The stamp reaches
// the templates one pass after the choice, so the pass that renders the new templates also
// plans the rollout for them.
const AnnotationCertificateRestart = "memgraph.com/certificate-restart"

// CertificateStamp identifies the TLS material the pods are to serve: the first 16 hex digits of
// the SHA-256 of the Secrets' tls.crt and ca.crt values as sent (base64), Bolt's Secret first,
// then the intra-cluster one ("" when it is the same Secret or off). tls.key is left out: a new
// key comes with a new certificate.
func CertificateStamp(boltCert, boltCA, clusterCert, clusterCA string) string {
	h := sha256.New()
	for _, v := range []string{boltCert, boltCA, clusterCert, clusterCA} {
		h.Write([]byte(v))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// WithCertificateRestart is the cluster whose pod templates carry AnnotationCertificateRestart
// with stamp ("" for none): the same cluster when stamp is its own.
func (c *Cluster) WithCertificateRestart(stamp string) *Cluster {
	if stamp == c.restartStamp {
		return c
	}
	cp := *c
	cp.restartStamp = stamp
	return &cp
}

func stampTemplates(stamp string, sets ...*appsv1.StatefulSet) {
	if stamp == "" {
		return
	}
	for _, sts := range sets {
		a := map[string]string{AnnotationCertificateRestart: stamp}
		for k, v := range sts.Spec.Template.Annotations {
			a[k] = v
		}
		sts.Spec.Template.Annotations = a
	}
}

// RenderCertificateRestart records on both StatefulSets' metadata (children as DesiredChildren
// returns them) that a restart was chosen for stamp; "" records none.
func RenderCertificateRestart(c *Cluster, children []map[string]any, stamp string) {
	if stamp == "" {
		return
	}
	for _, child := range children {
		meta, _ := child["metadata"].(map[string]any)
		if child["kind"] != "StatefulSet" || meta == nil {
			continue
		}
		if name := meta["name"]; name != CoordinatorSetName(c.Name()) && name != DataSetName(c.Name()) {
			continue
		}
		annotations, _ := meta["annotations"].(map[string]any)
		if annotations == nil {
			annotations = map[string]any{}
			meta["annotations"] = annotations
		}
		annotations[AnnotationCertificateRestart] = stamp
	}
}
