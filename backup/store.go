package backup

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
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
		return nil, permanent("object store endpoint %q: want host[:port], optionally after http:// or https://", obj.Endpoint)
	}
	if obj.Bucket == "" {
		return nil, permanent("object store bucket is empty")
	}
	transport, err := minio.DefaultTransport(secure)
	if err != nil {
		return nil, permanent("object store transport: %v", err)
	}
	if len(obj.CAPEM) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(obj.CAPEM) {
			return nil, permanent("object store CA bundle holds no PEM certificate")
		}
		transport.TLSClientConfig.RootCAs = pool
	}
	return minio.New(endpoint, &minio.Options{
		Creds:     credentials.NewStaticV4(creds.AccessKeyID, creds.SecretAccessKey, ""),
		Secure:    secure,
		Region:    obj.Region,
		Transport: unknownCAFailsFast{transport},
		// An upload's checksum travels as an HTTP trailer after the bytes it covers (and as a
		// header of each part of a multipart upload): the store verifies it on arrival.
		TrailingHeaders: true,
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

// UploadResult is the object an upload wrote: its key, size, ETag, the hex SHA-256 and the
// base64 full-object CRC32C of the bytes sent, and how the stored object was found to hold them
// (Verified).
type UploadResult struct {
	Key    string
	Size   int64
	ETag   string
	SHA256 string
	CRC32C string
	// Verified is "checksum" when the store reported the object's CRC32C, equal to the one sent
	// (and its size), or "read back" when it reports none and the object was read back whole
	// and its SHA-256 found equal.
	Verified string
}

// The ways Upload verifies a stored object.
const (
	VerifiedByChecksum = "checksum"
	VerifiedByReading  = "read back"
)

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
		return 0, permanent("%d bytes is more than the %d an upload holds (%d parts of at most %d MiB, which the agent's memory bounds)",
			size, MaxUploadSize, maxParts, maxPartSize>>20)
	}
	per := (size + maxParts - 1) / maxParts
	per = (per + 1<<20 - 1) &^ (1<<20 - 1)
	return uint64(max(per, minPartSize)), nil
}

// Upload streams size bytes from r to obj, one part at a time, then verifies what the store
// holds. Every request carries the CRC32C of the bytes it sends (minio-go's checksum option,
// full-object CRC32C: a trailer of a single PUT, a header of each part and the whole object's of
// the multipart upload's completion), which the store verifies on arrival and keeps; the agent
// computes the same CRC32C and the SHA-256 as the bytes go, then reads the object's size and
// CRC32C back from the store (checksum mode) and compares them — or, from a store that reports
// no checksum, reads the object back whole and compares its SHA-256. progress, when set, is told
// how many bytes the store received so far. The store's refusal comes back as a *StoreError; a
// stored object that differs from what was sent, as a *MismatchError.
func Upload(ctx context.Context, obj S3Object, creds S3Credentials, r io.Reader, size int64, progress func(sent int64)) (UploadResult, error) {
	if obj.Key == "" {
		return UploadResult{}, permanent("object key is empty")
	}
	part, err := partSize(size)
	if err != nil {
		return UploadResult{}, err
	}
	client, err := newStore(obj, creds)
	if err != nil {
		return UploadResult{}, err
	}
	sums := newSums()
	// A reader that is not an io.ReaderAt makes minio-go send the parts one after the other
	// from a single buffer, and every byte passes through the hashes once, in order.
	src := io.TeeReader(io.LimitReader(r, size), sums)
	opts := minio.PutObjectOptions{ContentType: "application/octet-stream", PartSize: part, NumThreads: 1,
		Checksum: minio.ChecksumFullObjectCRC32C,
		// The checksum trailer, not a SHA-256 of the payload in the signature: a signed
		// streaming payload with a trailer is what versitygw v1.8.0 refuses over plain HTTP.
		DisableContentSha256: true}
	if progress != nil {
		opts.Progress = &progressReader{total: size, report: progress}
	}
	info, err := client.PutObject(ctx, obj.Bucket, obj.Key, src, size, opts)
	if err != nil {
		return UploadResult{}, storeError("upload", obj, err)
	}
	res := UploadResult{Key: info.Key, Size: info.Size, ETag: info.ETag, SHA256: sums.sha256(), CRC32C: sums.crc32c()}
	res.Verified, err = verifyStored(ctx, client, obj, res)
	return res, err
}

// MismatchError is a stored object whose size or checksum is not what was sent.
type MismatchError struct {
	Bucket, Key string
	What        string // "size", "CRC32C", "SHA-256"
	Sent, Found string
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("s3://%s/%s as stored has %s %s; %s was sent", e.Bucket, e.Key, e.What, e.Found, e.Sent)
}

// verifyStored compares the object the store holds with what the upload sent (sent), by the
// size and CRC32C the store reports, or by reading it back when it reports no CRC32C.
func verifyStored(ctx context.Context, client *minio.Client, obj S3Object, sent UploadResult) (string, error) {
	info, err := client.StatObject(ctx, obj.Bucket, obj.Key, minio.StatObjectOptions{Checksum: true})
	if err != nil {
		return "", storeError("stat", obj, err)
	}
	mismatch := func(what, sentValue, found string) error {
		return &MismatchError{Bucket: obj.Bucket, Key: obj.Key, What: what, Sent: sentValue, Found: found}
	}
	if info.Size != sent.Size {
		return "", mismatch("size", fmt.Sprint(sent.Size), fmt.Sprint(info.Size))
	}
	if stored := fullObjectCRC32C(info); stored != "" {
		if stored != sent.CRC32C {
			return "", mismatch("CRC32C", sent.CRC32C, stored)
		}
		return VerifiedByChecksum, nil
	}
	o, err := client.GetObject(ctx, obj.Bucket, obj.Key, minio.GetObjectOptions{})
	if err != nil {
		return "", storeError("read back", obj, err)
	}
	defer o.Close()
	back := newSums()
	if _, err := io.Copy(back, o); err != nil {
		return "", storeError("read back", obj, err)
	}
	if back.sha256() != sent.SHA256 {
		return "", mismatch("SHA-256", sent.SHA256, back.sha256())
	}
	return VerifiedByReading, nil
}

// fullObjectCRC32C is the object's full-object CRC32C as the store reports it; "" when it
// reports none, or only a composite one (of the parts' checksums, "…-<parts>"), which is not a
// checksum of the bytes.
func fullObjectCRC32C(info minio.ObjectInfo) string {
	if info.ChecksumCRC32C == "" || strings.Contains(info.ChecksumCRC32C, "-") ||
		(info.ChecksumMode != "" && !strings.EqualFold(info.ChecksumMode, "FULL_OBJECT")) {
		return ""
	}
	return info.ChecksumCRC32C
}

// sums are the SHA-256 and the CRC32C of the bytes written to them.
type sums struct {
	sha hash.Hash
	crc hash.Hash32
}

func newSums() *sums {
	return &sums{sha: sha256.New(), crc: crc32.New(crc32.MakeTable(crc32.Castagnoli))}
}

func (s *sums) Write(b []byte) (int, error) {
	s.sha.Write(b)
	return s.crc.Write(b)
}

func (s *sums) sha256() string { return hex.EncodeToString(s.sha.Sum(nil)) }

// crc32c is the CRC32C in S3's spelling: base64 of its four big-endian bytes.
func (s *sums) crc32c() string { return base64.StdEncoding.EncodeToString(s.crc.Sum(nil)) }

// CheckBucket asks the store for the first key under obj.Key in obj's bucket, with the
// credentials: the refusals a backup would meet only after its snapshots (a wrong key, a bucket
// that does not exist, a certificate not trusted) come before them, in the store's own words (a
// listing's error has a body; a HEAD's has none).
func CheckBucket(ctx context.Context, obj S3Object, creds S3Credentials) error {
	client, err := newStore(obj, creds)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops the listing after its first page
	for info := range client.ListObjects(ctx, obj.Bucket, minio.ListObjectsOptions{Prefix: obj.Key, MaxKeys: 1}) {
		if info.Err != nil {
			return storeError("check bucket", obj, info.Err)
		}
		break
	}
	return nil
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

// OpenObject opens obj for reading from its start, with what the store says of it (its
// CRC32C included, when it keeps one: the caller verifies the bytes against it); an object that
// does not exist is a *StoreError for which IsNotFound is true.
func OpenObject(ctx context.Context, obj S3Object, creds S3Credentials) (io.ReadCloser, ObjectInfo, error) {
	client, err := newStore(obj, creds)
	if err != nil {
		return nil, ObjectInfo{}, err
	}
	info, err := client.StatObject(ctx, obj.Bucket, obj.Key, minio.StatObjectOptions{Checksum: true})
	if err != nil {
		return nil, ObjectInfo{}, storeError("download", obj, err)
	}
	// Read without minio-go's own check: a mismatch is the caller's to find, and to call what
	// it is (the object changed since it was uploaded), not a failed read.
	o, err := client.GetObject(ctx, obj.Bucket, obj.Key, minio.GetObjectOptions{})
	if err != nil {
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
	info, err := client.StatObject(ctx, obj.Bucket, obj.Key, minio.StatObjectOptions{Checksum: true})
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
		CRC32C:       fullObjectCRC32C(info),
	}
}
