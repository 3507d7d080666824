package backup

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"

	"github.com/minio/minio-go/v7"
)

// StoreError is a refusal by the object store, in its own words: the S3 error code (NoSuchBucket,
// AccessDenied, InvalidAccessKeyId, …) and message. Its text is what a MemgraphBackup's status
// shows.
type StoreError struct {
	Op         string // what was asked: "upload", "stat", "remove", "list", "download"
	Bucket     string
	Key        string
	StatusCode int
	Code       string
	Message    string
}

func (e *StoreError) Error() string {
	return fmt.Sprintf("%s s3://%s/%s: %s: %s", e.Op, e.Bucket, e.Key, e.Code, e.Message)
}

// IsNotFound reports whether err is the store saying the object (not the bucket) does not exist.
func IsNotFound(err error) bool {
	var se *StoreError
	return errors.As(err, &se) && (se.Code == "NoSuchKey" || (se.Code == "" && se.StatusCode == http.StatusNotFound))
}

// storeError turns minio-go's error into a StoreError when the store answered, and otherwise
// (the store could not be reached, a TLS failure) wraps it with the operation and object.
func storeError(op string, obj S3Object, err error) error {
	if err == nil {
		return nil
	}
	resp := minio.ToErrorResponse(err)
	if resp.Code == "" && resp.StatusCode == 0 {
		return fmt.Errorf("%s s3://%s/%s: %w", op, obj.Bucket, obj.Key, err)
	}
	msg := resp.Message
	if msg == "" {
		msg = http.StatusText(resp.StatusCode)
	}
	return &StoreError{Op: op, Bucket: obj.Bucket, Key: obj.Key, StatusCode: resp.StatusCode, Code: resp.Code, Message: msg}
}

// Transient reports whether a store's error is one that trying again may mend: the store did
// not answer or the connection broke (a network error), it answered that it is busy or failed
// inside (5xx, SlowDown, 429, RequestTimeout), a checksum did not match what arrived (BadDigest:
// damaged in transit; the upload is sent again), or the stored object was not what was sent.
// A refusal (a wrong key, a bucket that does not exist, access denied, any other 4xx), a
// certificate nobody trusts, and what the agent itself refuses (permanent) are not.
func Transient(err error) bool {
	var (
		se       *StoreError
		mismatch *MismatchError
		p        *permanentError
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
	)
	switch {
	case err == nil, errors.As(err, &p), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return false
	case errors.As(err, &mismatch):
		return true
	case errors.As(err, &se):
		switch se.Code {
		case "SlowDown", "RequestTimeout", "InternalError", "ServiceUnavailable", "BadDigest", "XAmzContentChecksumMismatch":
			return true
		}
		return se.StatusCode >= http.StatusInternalServerError || se.StatusCode == http.StatusTooManyRequests
	case errors.As(err, &unknown), errors.As(err, &hostname), errors.As(err, &invalid):
		return false
	}
	return true
}
