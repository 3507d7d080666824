package backup

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	kjson "sigs.k8s.io/json"
)

// decodeJobRequest reads one JobRequest strictly (case-sensitive names, no unknown or duplicate
// fields) and checks the fields its kind needs; every error names the JSON path.
func decodeJobRequest(r io.Reader) (JobRequest, error) {
	var req JobRequest
	body, err := io.ReadAll(r)
	if err != nil {
		return req, fmt.Errorf("reading the request body: %w", err)
	}
	if len(strings.TrimSpace(string(body))) == 0 {
		return req, errors.New("empty request body: expected a job request object")
	}
	strict, err := kjson.UnmarshalStrict(body, &req)
	if err != nil {
		return req, decodeError(err)
	}
	if len(strict) > 0 {
		return req, fmt.Errorf("invalid job request: %w", errors.Join(strict...))
	}
	return req, checkJobRequest(req)
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
		return fmt.Errorf("invalid job request: %s must be %s, got %s", what, typeErr.Type, typeErr.Value)
	}
	return fmt.Errorf("invalid job request: %w", err)
}

// checkJobRequest names the first field that is wrong: a kind the agent does not run, a required
// field that is empty, a role a backup cannot be chosen in, a deadline that is not set.
func checkJobRequest(req JobRequest) error {
	if req.Kind != KindBackup && req.Kind != KindRestore {
		return fmt.Errorf("invalid job request: kind %q: want %s or %s", req.Kind, KindBackup, KindRestore)
	}
	for _, f := range []struct{ path, value string }{
		{"memgraph.address", req.Memgraph.Address},
		{"store.endpoint", req.Store.Endpoint},
		{"store.bucket", req.Store.Bucket},
		{"store.key", req.Store.Key},
		{"credentials.accessKeyId", req.Credentials.AccessKeyID},
		{"credentials.secretAccessKey", req.Credentials.SecretAccessKey},
	} {
		if f.value == "" {
			return fmt.Errorf("invalid job request: %s is required", f.path)
		}
	}
	switch {
	case req.Deadline.IsZero():
		return errors.New("invalid job request: deadline is required")
	case req.Kind == KindBackup && req.Role != "main" && req.Role != "replica":
		return fmt.Errorf("invalid job request: role %q: a backup is taken on a main or a replica", req.Role)
	}
	for i, d := range req.Databases {
		if d.Name == "" || d.Key == "" {
			return fmt.Errorf("invalid job request: databases[%d] needs a name and a key", i)
		}
	}
	return nil
}
