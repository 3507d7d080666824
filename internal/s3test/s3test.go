// Package s3test is an S3 store for tests: gofakes3's in-memory backend behind a front that
// does what the backup path relies on and gofakes3 does not. It decodes aws-chunked bodies (the
// STREAMING-UNSIGNED-PAYLOAD-TRAILER minio-go sends with a checksum, signed chunks too), verifies
// every x-amz-checksum-crc32c a request carries — as a header of a PUT or a part, as a trailer,
// or as the full-object checksum of a CompleteMultipartUpload — and refuses a mismatch with 400
// BadDigest as S3 does, and answers a HEAD or GET with x-amz-checksum-mode: ENABLED with the
// full-object CRC32C it verified when the object arrived (as a store that keeps checksums with
// its objects: changing the bytes behind its back, Tamper, leaves that checksum as it was).
package s3test

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/pem"
	"fmt"
	"hash/crc32"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// Server is one store.
type Server struct {
	// Mem holds the buckets and objects.
	Mem *s3mem.Backend
	// URL is http://127.0.0.1:<port>, or https:// with WithTLS; CAPEM is then the CA of its
	// certificate.
	URL   string
	CAPEM []byte
	// Puts counts the PUTs served (objects and parts).
	Puts atomic.Int64

	fake       http.Handler
	noChecksum bool
	mu         sync.Mutex
	sums       map[string]string // bucket/key → the full-object CRC32C verified on arrival
}

type options struct {
	tls, noChecksum bool
	front           func(http.Handler) http.Handler
	config          func(*http.Server)
}

// Option configures New.
type Option func(*options)

// WithTLS serves HTTPS with a certificate of a CA of its own (CAPEM).
func WithTLS() Option { return func(o *options) { o.tls = true } }

// WithoutChecksums is a store that ignores checksums: it verifies none and reports none, as
// one without S3's checksum support does.
func WithoutChecksums() Option { return func(o *options) { o.noChecksum = true } }

// WithFront puts a handler in front of the store: what it does to a request (a byte changed in
// transit, an error answered instead) the store sees or never sees.
func WithFront(front func(store http.Handler) http.Handler) Option {
	return func(o *options) { o.front = front }
}

// WithServerConfig changes the http.Server before it starts (its ConnState, say).
func WithServerConfig(config func(*http.Server)) Option {
	return func(o *options) { o.config = config }
}

// New starts a store holding buckets; it stops with the test.
func New(t testing.TB, buckets []string, opts ...Option) *Server {
	t.Helper()
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	s := &Server{Mem: s3mem.New(), noChecksum: o.noChecksum, sums: map[string]string{}}
	for _, b := range buckets {
		if err := s.Mem.CreateBucket(b); err != nil {
			t.Fatal(err)
		}
	}
	s.fake = gofakes3.New(s.Mem).Server()
	var h http.Handler = s
	if o.front != nil {
		h = o.front(s)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // refused handshakes are some tests' point
	if o.config != nil {
		o.config(srv.Config)
	}
	t.Cleanup(srv.Close)
	if o.tls {
		srv.StartTLS()
		s.CAPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	} else {
		srv.Start()
	}
	s.URL = srv.URL
	return s
}

// CRC32C is the base64 full-object CRC32C of data, as S3 spells it.
func CRC32C(data []byte) string {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], crc32.Checksum(data, crc32.MakeTable(crc32.Castagnoli)))
	return base64.StdEncoding.EncodeToString(b[:])
}

// Tamper replaces the bytes of an object behind the store's back: the checksum it reports stays
// the one it verified on arrival.
func (s *Server) Tamper(t testing.TB, bucket, key string, data []byte) {
	t.Helper()
	if _, err := s.Mem.PutObject(bucket, key, map[string]string{}, bytes.NewReader(data), int64(len(data)), nil); err != nil {
		t.Fatal(err)
	}
}

// Object is the content of an object; ok is false when it does not exist.
func (s *Server) Object(bucket, key string) ([]byte, bool) {
	obj, err := s.Mem.GetObject(bucket, key, nil)
	if err != nil {
		return nil, false
	}
	defer obj.Contents.Close()
	data, err := io.ReadAll(obj.Contents)
	return data, err == nil
}

const crcHeader = "X-Amz-Checksum-Crc32c"

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	bucket, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	where := bucket + "/" + key
	q := r.URL.Query()
	switch {
	case r.Method == http.MethodPut:
		s.Puts.Add(1)
		body, err := readBody(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		sum := CRC32C(body)
		if s.noChecksum {
			for k := range r.Header {
				if strings.HasPrefix(k, "X-Amz-Checksum-") || strings.HasPrefix(k, "X-Amz-Sdk-Checksum") {
					r.Header.Del(k) // kept as metadata, gofakes3 would report it
				}
			}
		}
		if want := r.Header.Get(crcHeader); want != "" && want != sum && !s.noChecksum {
			badDigest(w)
			return
		}
		if want := r.Header.Get(crcHeader); want != "" && !s.noChecksum {
			w.Header().Set(crcHeader, want) // as S3 answers a PUT or a part that carried one
		}
		rec := &recorder{ResponseWriter: w}
		s.fake.ServeHTTP(rec, r)
		if !q.Has("uploadId") && rec.code() == http.StatusOK && !s.noChecksum {
			s.remember(where, sum)
		}
	case r.Method == http.MethodPost && q.Has("uploadId"):
		want := r.Header.Get(crcHeader)
		rec := &recorder{ResponseWriter: w, hold: want != "" && !s.noChecksum}
		s.fake.ServeHTTP(rec, r)
		if !rec.hold || rec.code() != http.StatusOK {
			rec.release()
			return
		}
		data, _ := s.Object(bucket, key)
		if sum := CRC32C(data); sum != want {
			_, _ = s.Mem.DeleteObject(bucket, key)
			badDigest(w)
			return
		}
		s.remember(where, want)
		rec.release()
	case r.Method == http.MethodDelete:
		s.mu.Lock()
		delete(s.sums, where)
		s.mu.Unlock()
		s.fake.ServeHTTP(w, r)
	case (r.Method == http.MethodHead || r.Method == http.MethodGet) && strings.EqualFold(r.Header.Get("X-Amz-Checksum-Mode"), "ENABLED"):
		s.mu.Lock()
		sum, ok := s.sums[where]
		s.mu.Unlock()
		if ok {
			w.Header().Set(crcHeader, sum)
			w.Header().Set("X-Amz-Checksum-Type", "FULL_OBJECT")
		}
		s.fake.ServeHTTP(w, r)
	default:
		s.fake.ServeHTTP(w, r)
	}
}

func (s *Server) remember(where, sum string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sums[where] = sum
}

func badDigest(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>BadDigest</Code>`+
		`<Message>The CRC32C you specified did not match the calculated checksum.</Message></Error>`)
}

// readBody reads a PUT's payload, decoding an aws-chunked body (its trailers become headers),
// and leaves r carrying it as a plain body for gofakes3.
func readBody(r *http.Request) ([]byte, error) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	body := raw
	if sha := r.Header.Get("X-Amz-Content-Sha256"); strings.HasPrefix(sha, "STREAMING-") {
		var trailers map[string]string
		if body, trailers, err = decodeChunked(raw); err != nil {
			return nil, fmt.Errorf("aws-chunked body: %w", err)
		}
		for k, v := range trailers {
			r.Header.Set(k, v)
		}
		r.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
		r.Header.Del("X-Amz-Decoded-Content-Length")
		r.Header.Del("Content-Encoding")
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	r.Header.Set("Content-Length", strconv.Itoa(len(body)))
	return body, nil
}

// decodeChunked decodes aws-chunked: chunks of "<hex size>[;chunk-signature=…]\r\n<data>\r\n",
// a last chunk of size 0, then trailer lines "name:value" up to an empty line.
func decodeChunked(raw []byte) ([]byte, map[string]string, error) {
	in := bufio.NewReader(bytes.NewReader(raw))
	var out bytes.Buffer
	for {
		line, err := in.ReadString('\n')
		if err != nil {
			return nil, nil, fmt.Errorf("chunk header: %w", err)
		}
		sizeHex, _, _ := strings.Cut(strings.TrimRight(line, "\r\n"), ";")
		size, err := strconv.ParseInt(sizeHex, 16, 64)
		if err != nil {
			return nil, nil, fmt.Errorf("chunk size %q: %w", sizeHex, err)
		}
		if size == 0 {
			break
		}
		if _, err := io.CopyN(&out, in, size); err != nil {
			return nil, nil, fmt.Errorf("chunk of %d bytes: %w", size, err)
		}
		if crlf, err := in.ReadString('\n'); err != nil || strings.TrimRight(crlf, "\r\n") != "" {
			return nil, nil, fmt.Errorf("chunk not ended by CRLF")
		}
	}
	trailers := map[string]string{}
	for {
		line, err := in.ReadString('\n')
		line = strings.TrimRight(line, "\r\n")
		if k, v, ok := strings.Cut(line, ":"); ok {
			trailers[http.CanonicalHeaderKey(k)] = v
		}
		if err != nil {
			break
		}
	}
	return out.Bytes(), trailers, nil
}

// recorder passes a response through, noting its status; with hold it keeps the response back
// until release (a complete that may yet be refused).
type recorder struct {
	http.ResponseWriter
	status int
	hold   bool
	header http.Header
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header {
	if r.hold {
		if r.header == nil {
			r.header = http.Header{}
		}
		return r.header
	}
	return r.ResponseWriter.Header()
}

func (r *recorder) WriteHeader(code int) {
	r.status = code
	if !r.hold {
		r.ResponseWriter.WriteHeader(code)
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.WriteHeader(http.StatusOK)
	}
	if r.hold {
		return r.body.Write(b)
	}
	return r.ResponseWriter.Write(b)
}

func (r *recorder) code() int {
	if r.status == 0 {
		return http.StatusOK
	}
	return r.status
}

// release sends a held response.
func (r *recorder) release() {
	if !r.hold {
		return
	}
	for k, v := range r.header {
		r.ResponseWriter.Header()[k] = v
	}
	r.ResponseWriter.WriteHeader(r.code())
	_, _ = r.ResponseWriter.Write(r.body.Bytes())
}
