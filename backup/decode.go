package backup

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	kjson "sigs.k8s.io/json"
)

// decodeUploadRequest reads one UploadRequest strictly (case-sensitive names, no unknown or
// duplicate fields) and checks the fields an upload needs; every error names the JSON path.
func decodeUploadRequest(r io.Reader) (UploadRequest, error) {
	var req UploadRequest
	body, err := io.ReadAll(r)
	if err != nil {
		return req, fmt.Errorf("reading the request body: %w", err)
	}
	if len(strings.TrimSpace(string(body))) == 0 {
		return req, errors.New("empty request body: expected an upload request object")
	}
	strict, err := kjson.UnmarshalStrict(body, &req)
	if err != nil {
		return req, decodeError(err)
	}
	if len(strict) > 0 {
		return req, fmt.Errorf("invalid upload request: %w", errors.Join(strict...))
	}
	return req, checkUploadRequest(req)
}

func decodeError(err error) error {
	if syntax, offset := kjson.SyntaxErrorOffset(err); syntax {
		return fmt.Errorf("malformed JSON at byte %d: %v", offset, err)
	}
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		what := "the request body"
		if typeErr.Field != "" {
			what = typeErr.Field
		}
		return fmt.Errorf("invalid upload request: %s must be %s, got %s", what, typeErr.Type, typeErr.Value)
	}
	return fmt.Errorf("invalid upload request: %w", err)
}

// checkUploadRequest names the first required field that is empty.
func checkUploadRequest(req UploadRequest) error {
	for _, f := range []struct{ path, value string }{
		{"snapshot", req.Snapshot},
		{"object.endpoint", req.Object.Endpoint},
		{"object.bucket", req.Object.Bucket},
		{"object.key", req.Object.Key},
		{"credentials.accessKeyId", req.Credentials.AccessKeyID},
		{"credentials.secretAccessKey", req.Credentials.SecretAccessKey},
	} {
		if f.value == "" {
			return fmt.Errorf("invalid upload request: %s is required", f.path)
		}
	}
	return nil
}
