package backup

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// newStore returns a minio-go client for obj's store. An endpoint given with a scheme decides
// HTTP or HTTPS itself; without one, obj.Insecure does.
func newStore(obj S3Object, creds S3Credentials) (*minio.Client, error) {
	endpoint, secure := obj.Endpoint, !obj.Insecure
	if rest, ok := strings.CutPrefix(endpoint, "https://"); ok {
		endpoint, secure = rest, true
	} else if rest, ok := strings.CutPrefix(endpoint, "http://"); ok {
		endpoint, secure = rest, false
	}
	endpoint = strings.TrimSuffix(endpoint, "/")
	if endpoint == "" || strings.Contains(endpoint, "/") {
		return nil, fmt.Errorf("object store endpoint %q: want host[:port], optionally after http:// or https://", obj.Endpoint)
	}
	if obj.Bucket == "" {
		return nil, errors.New("object store bucket is empty")
	}
	transport, err := minio.DefaultTransport(secure)
	if err != nil {
		return nil, err
	}
	if len(obj.CAPEM) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(obj.CAPEM) {
			return nil, errors.New("object store CA bundle holds no PEM certificate")
		}
		transport.TLSClientConfig.RootCAs = pool
	}
	return minio.New(endpoint, &minio.Options{
		Creds:     credentials.NewStaticV4(creds.AccessKeyID, creds.SecretAccessKey, ""),
		Secure:    secure,
		Region:    obj.Region,
		Transport: unknownCAFailsFast{transport},
	})
}

// unknownCAFailsFast hands minio-go the x509.UnknownAuthorityError itself when the store's
// certificate is signed by a CA nobody trusts. minio-go stops retrying on that type (v7.4.1
// retry.go, isRequestErrorRetryable), but Go's TLS handshake wraps it in a
// *tls.CertificateVerificationError, which minio-go would retry ten times, for seconds, before
// a store whose CA is not given fails.
type unknownCAFailsFast struct{ next http.RoundTripper }

func (t unknownCAFailsFast) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	var unknown x509.UnknownAuthorityError
	if err != nil && errors.As(err, &unknown) {
		return nil, unknown
	}
	return resp, err
}

// UploadResult is the object an upload wrote: its key, size, ETag and the hex SHA-256 of the
// bytes sent.
type UploadResult struct {
	Key    string
	Size   int64
	ETag   string
	SHA256 string
}

// The parts of an upload: at least minio-go's 16 MiB, at most maxPartSize, which bounds the
// agent's memory (minio-go holds one part in memory while it sends it), and at most maxParts.
const (
	minPartSize = 16 << 20
	maxPartSize = 64 << 20
	maxParts    = 10000
)

// MaxUploadSize is the largest object Upload writes: 10,000 parts of 64 MiB.
const MaxUploadSize = int64(maxParts) * maxPartSize

// partSize is the smallest whole number of MiB, at least minPartSize, that fits size in
// maxParts parts.
func partSize(size int64) (uint64, error) {
	if size > MaxUploadSize {
		return 0, fmt.Errorf("%d bytes is more than the %d an upload holds (%d parts of at most %d MiB, which the agent's memory bounds)",
			size, MaxUploadSize, maxParts, maxPartSize>>20)
	}
	per := (size + maxParts - 1) / maxParts
	per = (per + 1<<20 - 1) &^ (1<<20 - 1)
	return uint64(max(per, minPartSize)), nil
}

// Upload streams size bytes from r to obj, one part at a time, hashing them with SHA-256 as they
// go; progress, when set, is told how many bytes the store received so far. The store's
// refusal comes back as a *StoreError.
func Upload(ctx context.Context, obj S3Object, creds S3Credentials, r io.Reader, size int64, progress func(sent int64)) (UploadResult, error) {
	if obj.Key == "" {
		return UploadResult{}, errors.New("object key is empty")
	}
	part, err := partSize(size)
	if err != nil {
		return UploadResult{}, err
	}
	client, err := newStore(obj, creds)
	if err != nil {
		return UploadResult{}, err
	}
	sum := sha256.New()
	// A reader that is not an io.ReaderAt makes minio-go send the parts one after the other
	// from a single buffer, and every byte passes through the hash once, in order.
	src := io.TeeReader(io.LimitReader(r, size), sum)
	opts := minio.PutObjectOptions{ContentType: "application/octet-stream", PartSize: part, NumThreads: 1}
	if progress != nil {
		opts.Progress = &progressReader{total: size, report: progress}
	}
	info, err := client.PutObject(ctx, obj.Bucket, obj.Key, src, size, opts)
	if err != nil {
		return UploadResult{}, storeError("upload", obj, err)
	}
	return UploadResult{Key: info.Key, Size: info.Size, ETag: info.ETag, SHA256: hex.EncodeToString(sum.Sum(nil))}, nil
}

// progressReader is minio-go's Progress: each Read is told the bytes just sent (a part sent
// again counts again, so the count is kept to the total).
type progressReader struct {
	total, sent int64
	report      func(int64)
}

func (p *progressReader) Read(b []byte) (int, error) {
	p.sent = min(p.sent+int64(len(b)), p.total)
	p.report(p.sent)
	return len(b), nil
}

// OpenObject opens obj for reading from its start, with what the store says of it; an object
// that does not exist is a *StoreError for which IsNotFound is true.
func OpenObject(ctx context.Context, obj S3Object, creds S3Credentials) (io.ReadCloser, ObjectInfo, error) {
	client, err := newStore(obj, creds)
	if err != nil {
		return nil, ObjectInfo{}, err
	}
	o, err := client.GetObject(ctx, obj.Bucket, obj.Key, minio.GetObjectOptions{})
	if err != nil {
		return nil, ObjectInfo{}, storeError("download", obj, err)
	}
	info, err := o.Stat()
	if err != nil {
		_ = o.Close()
		return nil, ObjectInfo{}, storeError("download", obj, err)
	}
	return o, objectInfo(info), nil
}

// StatObject describes obj.Key; an object that does not exist is a *StoreError for which
// IsNotFound is true.
func StatObject(ctx context.Context, obj S3Object, creds S3Credentials) (ObjectInfo, error) {
	client, err := newStore(obj, creds)
	if err != nil {
		return ObjectInfo{}, err
	}
	info, err := client.StatObject(ctx, obj.Bucket, obj.Key, minio.StatObjectOptions{})
	if err != nil {
		return ObjectInfo{}, storeError("stat", obj, err)
	}
	return objectInfo(info), nil
}

// RemoveObject deletes obj.Key. Removing an object that does not exist succeeds (S3 semantics),
// so a second call after a lost answer is harmless.
func RemoveObject(ctx context.Context, obj S3Object, creds S3Credentials) error {
	client, err := newStore(obj, creds)
	if err != nil {
		return err
	}
	return storeError("remove", obj, client.RemoveObject(ctx, obj.Bucket, obj.Key, minio.RemoveObjectOptions{}))
}

// ListObjects lists every object whose key starts with obj.Key, recursively, in key order.
func ListObjects(ctx context.Context, obj S3Object, creds S3Credentials) ([]ObjectInfo, error) {
	client, err := newStore(obj, creds)
	if err != nil {
		return nil, err
	}
	var out []ObjectInfo
	for info := range client.ListObjects(ctx, obj.Bucket, minio.ListObjectsOptions{Prefix: obj.Key, Recursive: true}) {
		if info.Err != nil {
			return nil, storeError("list", obj, info.Err)
		}
		out = append(out, objectInfo(info))
	}
	return out, nil
}

func objectInfo(info minio.ObjectInfo) ObjectInfo {
	return ObjectInfo{
		Key: info.Key, Size: info.Size, ETag: info.ETag,
		LastModified: info.LastModified.UTC().Format(time.RFC3339),
	}
}
