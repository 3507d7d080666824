package backup_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/memgraph-hooks/memgraph-hooks/backup"
	"github.com/memgraph-hooks/memgraph-hooks/internal/s3test"
)

// A store serving HTTPS with a certificate of a private CA: given that CA, an upload succeeds;
// without it, the upload fails on the certificate after one attempt — a CA that is not trusted
// is not a failure that retrying mends.
func TestAStoreOfAnUntrustedCAIsTriedOnce(t *testing.T) {
	var handshakes atomic.Int64
	srv := s3test.New(t, []string{bucket}, s3test.WithTLS(), s3test.WithServerConfig(func(c *http.Server) {
		c.ConnState = func(_ net.Conn, state http.ConnState) {
			if state == http.StateNew {
				handshakes.Add(1)
			}
		}
	}))
	obj := backup.S3Object{Endpoint: srv.URL, Bucket: bucket, Key: "snap", Region: "us-east-1"}

	_, err := backup.Upload(context.Background(), obj, creds, strings.NewReader("data"), 4, nil)
	var unknown x509.UnknownAuthorityError
	if !errors.As(err, &unknown) || backup.Transient(err) {
		t.Fatalf("upload without the store's CA: %v, want x509's unknown authority, not worth another try", err)
	}
	if n := handshakes.Load(); n != 1 {
		t.Errorf("the store was dialled %d times, want once", n)
	}

	obj.CAPEM = srv.CAPEM
	if _, err := backup.Upload(context.Background(), obj, creds, strings.NewReader("data"), 4, nil); err != nil {
		t.Fatalf("upload with the store's CA: %v", err)
	}
}

// Every upload, a single PUT or a multipart one, carries the CRC32C of its bytes, which the
// store verifies and keeps; after it the agent reads the store's CRC32C and size back and finds
// them equal to what it sent, which the result records with the SHA-256.
func TestAnUploadCarriesAChecksumTheStoreVerifies(t *testing.T) {
	for _, size := range []int{5, 20 << 20} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			s := newStoreOn(t, false)
			data := bytes.Repeat([]byte{'m'}, size)
			res, err := backup.Upload(context.Background(), s.object("k"), creds, bytes.NewReader(data), int64(size), nil)
			if err != nil {
				t.Fatal(err)
			}
			sha := sha256.Sum256(data)
			if res.CRC32C != s3test.CRC32C(data) || res.SHA256 != hex.EncodeToString(sha[:]) || res.Size != int64(size) ||
				res.Verified != backup.VerifiedByChecksum {
				t.Errorf("result %+v, want CRC32C %s, the SHA-256, and verified by the store's checksum", res, s3test.CRC32C(data))
			}
			if got, _ := s.Object(bucket, "k"); !bytes.Equal(got, data) {
				t.Errorf("the store holds %d bytes, want the %d sent", len(got), size)
			}
		})
	}
}

// flipOneByte damages the payload of every PUT on its way to the store.
func flipOneByte(store http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut {
			body, _ := io.ReadAll(r.Body)
			if i := bytes.Index(body, []byte("payload")); i >= 0 {
				body[i] = 'P'
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		store.ServeHTTP(w, r)
	})
}

// Bytes damaged on their way do not match the checksum the upload carries: the store refuses
// them (BadDigest), which is worth another try, and keeps nothing.
func TestTheStoreRefusesBytesDamagedInTransit(t *testing.T) {
	s := newStoreOn(t, false, s3test.WithFront(flipOneByte))
	data := []byte("the payload of a snapshot")
	_, err := backup.Upload(context.Background(), s.object("k"), creds, bytes.NewReader(data), int64(len(data)), nil)
	var se *backup.StoreError
	if !errors.As(err, &se) || se.Code != "BadDigest" || !backup.Transient(err) {
		t.Fatalf("upload through a link that damages a byte: %v, want the store's BadDigest, worth another try", err)
	}
	if _, ok := s.Object(bucket, "k"); ok {
		t.Error("the store kept the damaged object")
	}
}

// A store that reports no checksum: the agent reads the object back and compares its SHA-256;
// one that stored other bytes than it was sent (here, damaged on their way, and not verified)
// fails the upload with a mismatch, worth another try.
func TestAStoreWithoutChecksumsIsReadBack(t *testing.T) {
	data := []byte("the payload of a snapshot")
	plain := newStoreOn(t, false, s3test.WithoutChecksums())
	res, err := backup.Upload(context.Background(), plain.object("k"), creds, bytes.NewReader(data), int64(len(data)), nil)
	if err != nil || res.Verified != backup.VerifiedByReading {
		t.Fatalf("upload to a store without checksums: %+v, %v; want it read back", res, err)
	}
	damaging := newStoreOn(t, false, s3test.WithoutChecksums(), s3test.WithFront(flipOneByte))
	_, err = backup.Upload(context.Background(), damaging.object("k"), creds, bytes.NewReader(data), int64(len(data)), nil)
	var mismatch *backup.MismatchError
	if !errors.As(err, &mismatch) || mismatch.What != "SHA-256" || !backup.Transient(err) {
		t.Fatalf("upload the store stored damaged: %v, want a SHA-256 mismatch, worth another try", err)
	}
}

// Which errors of the store are worth another try.
func TestTransient(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"a refused connection", &net.OpError{Op: "dial", Err: errors.New("connection refused")}, true},
		{"the store is unavailable", &backup.StoreError{StatusCode: 503, Code: "ServiceUnavailable"}, true},
		{"the store fails inside", &backup.StoreError{StatusCode: 500, Code: "InternalError"}, true},
		{"slow down", &backup.StoreError{StatusCode: 503, Code: "SlowDown"}, true},
		{"too many requests", &backup.StoreError{StatusCode: 429, Code: "TooManyRequests"}, true},
		{"damaged in transit", &backup.StoreError{StatusCode: 400, Code: "BadDigest"}, true},
		{"stored other bytes", &backup.MismatchError{What: "CRC32C"}, true},
		{"access denied", &backup.StoreError{StatusCode: 403, Code: "AccessDenied"}, false},
		{"a wrong secret", &backup.StoreError{StatusCode: 403, Code: "SignatureDoesNotMatch"}, false},
		{"no such bucket", &backup.StoreError{StatusCode: 404, Code: "NoSuchBucket"}, false},
		{"an untrusted certificate", fmt.Errorf("upload: %w", x509.UnknownAuthorityError{}), false},
		{"the job's deadline", context.DeadlineExceeded, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := backup.Transient(tc.err); got != tc.want {
				t.Errorf("Transient(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}
