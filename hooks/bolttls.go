package hooks

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

const secretKey = "Secret.v1"

// boltTrust is what spec.tls asks of this pass: nothing (plaintext), the CA to verify the
// coordinators with, or a problem with the Secret that stops the pass from dialling at all.
// A problem is a sentence naming the Secret and what is wrong with it; it never quotes the
// Secret's content.
type boltTrust struct {
	config  *memgraph.BoltTLS
	problem string
}

// readBoltTLS finds the spec.tls Secret among the related objects (the customize hook asks
// Metacontroller for it) and checks it: a kubernetes.io/tls Secret whose tls.crt verifies
// against its ca.crt for every declared coordinator. Only ca.crt is kept; tls.key is never
// decoded. A malformed related object is a bad request; anything wrong with the Secret itself is
// a problem for the status.
func readBoltTLS(req *syncRequest, c *topology.Cluster) (boltTrust, error) {
	if c.TLSSecretName() == "" {
		return boltTrust{}, nil
	}
	secrets, err := objectsOf(req.Related, secretKey, "related")
	if err != nil {
		return boltTrust{}, err
	}
	name, namespace := c.TLSSecretName(), c.Namespace()
	where := fmt.Sprintf("Secret %s/%s (spec.tls.secretName)", namespace, name)
	for _, e := range secrets {
		if metaString(e.obj, "name") != name || (metaString(e.obj, "namespace") != "" && metaString(e.obj, "namespace") != namespace) {
			continue
		}
		trust, problem := checkTLSSecret(e.obj, c)
		if problem != "" {
			return boltTrust{problem: where + " " + problem}, nil
		}
		return boltTrust{config: trust}, nil
	}
	return boltTrust{problem: where + " does not exist: create a kubernetes.io/tls Secret with tls.crt, tls.key and ca.crt in the cluster's namespace"}, nil
}

func checkTLSSecret(s object, c *topology.Cluster) (*memgraph.BoltTLS, string) {
	if typ, _ := s["type"].(string); typ != string(corev1.SecretTypeTLS) {
		return nil, fmt.Sprintf("is of type %q, want %s", typ, corev1.SecretTypeTLS)
	}
	data, _ := s["data"].(map[string]any)
	values := map[string][]byte{}
	for _, key := range []string{topology.BoltCAKey, topology.BoltCertKey, topology.BoltKeyKey} {
		encoded, _ := data[key].(string)
		if encoded == "" {
			return nil, "has no " + key + ": it needs tls.crt and tls.key (the pods serve them) and ca.crt (the hook verifies the coordinators with it)"
		}
		if key == topology.BoltKeyKey {
			continue // the private key is the pods' business: the hook never decodes it
		}
		raw, err := base64.StdEncoding.DecodeString(encoded)
		if err != nil {
			return nil, "has a " + key + " that is not valid base64"
		}
		values[key] = raw
	}
	trust, err := memgraph.NewBoltTLS(values[topology.BoltCAKey])
	if err != nil {
		return nil, "has an unusable ca.crt: " + err.Error()
	}
	chain := certificates(values[topology.BoltCertKey])
	if len(chain) == 0 {
		return nil, "has a tls.crt that holds no PEM certificate"
	}
	n := c.Network()
	for i := range int(c.Replicas().Coordinators) {
		host := n.Coordinator(topology.FirstCoordinatorID + i).Host
		if err := trust.Verify(chain, host); err != nil {
			return nil, fmt.Sprintf("has a tls.crt that does not verify against its ca.crt for coordinator %s: %v", host, err)
		}
	}
	return trust, ""
}

// certificates parses the CERTIFICATE blocks of a PEM chain, leaf first; a block that does not
// parse ends the chain.
func certificates(pemBytes []byte) []*x509.Certificate {
	var chain []*x509.Certificate
	for {
		var block *pem.Block
		block, pemBytes = pem.Decode(pemBytes)
		if block == nil {
			return chain
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return chain
		}
		chain = append(chain, cert)
	}
}

// connector is how this pass reaches the coordinators: the configured Connector, over TLS when
// spec.tls asks for it. A Connector that cannot do TLS is a problem, never a plaintext fallback.
func (h *handler) connector(t boltTrust) (memgraph.Connector, string) {
	if t.problem != "" {
		return nil, t.problem
	}
	if t.config == nil {
		return h.cfg.Connector, ""
	}
	secure, ok := h.cfg.Connector.(memgraph.TLSConnector)
	if !ok {
		return nil, "spec.tls is set but this hook's Bolt connector cannot dial TLS"
	}
	return secure.WithTLS(t.config), ""
}
