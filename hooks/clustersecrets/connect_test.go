package clustersecrets

import (
	"testing"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/internal/pki"
)

// A controller that reaches a cluster with a copy of its CA trusts nothing without spec.tls,
// the copy with it, and says which Secret's CA does not parse, never its content.
func TestTrustOf(t *testing.T) {
	ca, err := pki.NewAuthority("test CA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	plain, withTLS := admitted(t, `{}`), admitted(t, `{"tls":{"secretName":"mg-tls"}}`)
	if got := TrustOf(plain, ca.CertPEM); got.Config != nil || got.Problem != "" || got.CAPEM != nil {
		t.Errorf("without spec.tls: %+v, want no trust", got)
	}
	if got := TrustOf(withTLS, ca.CertPEM); got.Config == nil || got.Problem != "" || string(got.CAPEM) != string(ca.CertPEM) {
		t.Errorf("with spec.tls and its CA: %+v, want the CA trusted", got)
	}
	got := TrustOf(withTLS, []byte("-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n"))
	want := "the CA of Secret db/mg-tls (spec.tls.secretName): certificate 1 of the CA bundle does not parse"
	if got.Config != nil || len(got.Problem) < len(want) || got.Problem[:len(want)] != want {
		t.Errorf("a CA that does not parse: problem %q, want it to start %q", got.Problem, want)
	}
	if _, problem := got.Connector(nil); problem != got.Problem {
		t.Errorf("its connector's problem %q, want %q", problem, got.Problem)
	}
}
