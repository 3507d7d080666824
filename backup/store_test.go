package backup_test

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/memgraph-hooks/memgraph-hooks/backup"
)

// A store serving HTTPS with a certificate of a private CA: given that CA, an upload succeeds;
// without it, the upload fails on the certificate after one attempt — a CA that is not trusted
// is not a failure that retrying mends.
func TestAStoreOfAnUntrustedCAIsTriedOnce(t *testing.T) {
	mem := s3mem.New()
	if err := mem.CreateBucket(bucket); err != nil {
		t.Fatal(err)
	}
	var handshakes atomic.Int64
	srv := httptest.NewUnstartedServer(gofakes3.New(mem).Server())
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateNew {
			handshakes.Add(1)
		}
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	obj := backup.S3Object{Endpoint: srv.URL, Bucket: bucket, Key: "snap", Region: "us-east-1"}

	_, err := backup.Upload(context.Background(), obj, creds, strings.NewReader("data"), 4, nil)
	var unknown x509.UnknownAuthorityError
	if !errors.As(err, &unknown) {
		t.Fatalf("upload without the store's CA: %v, want x509's unknown authority", err)
	}
	if n := handshakes.Load(); n != 1 {
		t.Errorf("the store was dialled %d times, want once", n)
	}

	obj.CAPEM = ca
	if _, err := backup.Upload(context.Background(), obj, creds, strings.NewReader("data"), 4, nil); err != nil {
		t.Fatalf("upload with the store's CA: %v", err)
	}
}
