package backup

import (
	"context"
	"crypto/x509"
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

// Upload streams size bytes from r to obj. The store's refusal comes back as a *StoreError.
func Upload(ctx context.Context, obj S3Object, creds S3Credentials, r io.Reader, size int64) (UploadResult, error) {
	if obj.Key == "" {
		return UploadResult{}, errors.New("object key is empty")
	}
	client, err := newStore(obj, creds)
	if err != nil {
		return UploadResult{}, err
	}
	info, err := client.PutObject(ctx, obj.Bucket, obj.Key, r, size, minio.PutObjectOptions{ContentType: "application/octet-stream"})
	if err != nil {
		return UploadResult{}, storeError("upload", obj, err)
	}
	return UploadResult{Key: info.Key, Size: info.Size, ETag: info.ETag}, nil
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

// Download writes obj to the file path (created or replaced).
func Download(ctx context.Context, obj S3Object, creds S3Credentials, path string) error {
	client, err := newStore(obj, creds)
	if err != nil {
		return err
	}
	return storeError("download", obj, client.FGetObject(ctx, obj.Bucket, obj.Key, path, minio.GetObjectOptions{}))
}
