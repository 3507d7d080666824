package topology

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
)

// AnnotationCertificateRestart restarts the pods for a certificate that could not be reloaded.
// Its value is a CertificateStamp. On a StatefulSet's metadata it records that a pass chose the
// restart for that Secret content (CertificateRecord); on both pod templates it is the
// restart itself (Rendering.Restart): a new template revision, which the rollout rolls one
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

// AnnotationCertificateSeen on a StatefulSet is "<stamp>@<RFC 3339 time>": when the hook first
// saw the Secret content of that CertificateStamp (the kubelet projects it within a grace of
// that, planner.ProjectionGrace). AnnotationCertificateReloaded is the stamp every instance has
// reloaded (or started with).
const (
	AnnotationCertificateSeen     = "memgraph.com/certificate-seen"
	AnnotationCertificateReloaded = "memgraph.com/certificate-reloaded"
)

// CertificateRecord is the hook's record of a certificate rotation on the StatefulSets'
// metadata (never on the pod templates but for Restart, see AnnotationCertificateRestart).
type CertificateRecord struct {
	Restart, Seen, Reloaded string
}

// SeenStamp and SeenAt read Seen; ok is false when it does not parse.
func (r CertificateRecord) SeenStamp() (stamp string, at time.Time, ok bool) {
	stamp, when, found := strings.Cut(r.Seen, "@")
	t, err := time.Parse(time.RFC3339, when)
	return stamp, t, found && err == nil
}

// NextCertificateRecord is the record a pass returns: observed as it is, with the Secret's
// content stamp seen now unless it was seen before; a first record (no Seen yet: the pods started
// with the current files) records stamp as reloaded; restart and reloaded are this pass's
// decisions ("" keeps the observed ones). Without spec.tls (stamp "") nothing is recorded.
func NextCertificateRecord(observed CertificateRecord, stamp, restart, reloaded string, now time.Time) CertificateRecord {
	if stamp == "" {
		return CertificateRecord{}
	}
	next := observed
	if observed.Seen == "" {
		next.Reloaded = stamp
	}
	if seen, _, ok := observed.SeenStamp(); !ok || seen != stamp {
		next.Seen = stamp + "@" + now.UTC().Format(time.RFC3339)
	}
	if restart != "" {
		next.Restart = restart
	}
	if reloaded != "" {
		next.Reloaded = reloaded
	}
	return next
}

// recordCertificate puts r on a StatefulSet's metadata; empty values are left out.
func recordCertificate(sts *appsv1.StatefulSet, r CertificateRecord) {
	for _, kv := range [...][2]string{{AnnotationCertificateRestart, r.Restart}, {AnnotationCertificateSeen, r.Seen},
		{AnnotationCertificateReloaded, r.Reloaded}} {
		if kv[1] != "" {
			setAnnotation(&sts.ObjectMeta, kv[0], kv[1])
		}
	}
}
