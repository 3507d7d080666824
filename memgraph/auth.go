package memgraph

import (
	"fmt"
	"io"
	"log/slog"
)

// Credentials are a cluster's Bolt credentials, sent as basic auth. In Memgraph 3.12
// coordinators ignore auth, while a data instance requires it once a user exists on it, so
// ShowReplicas is the query that needs them.
//
// Credentials never print, log or marshal their content: fmt, log/slog and encoding/json see a
// placeholder.
type Credentials struct {
	Username string
	Password string
}

// IsZero reports whether c has no username: such Credentials are no credentials of their own
// (see AuthConnector.WithAuth).
func (c Credentials) IsZero() bool { return c.Username == "" }

// redacted is what fmt, log/slog and encoding/json show instead of Credentials' content.
const redacted = "memgraph.Credentials{redacted}"

// Format prints a placeholder for every verb, so a %v or %+v of a struct that holds
// Credentials does not reveal them.
func (c Credentials) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, redacted) }

// LogValue keeps Credentials out of log/slog output, whatever the handler.
func (c Credentials) LogValue() slog.Value { return slog.StringValue(redacted) }

// MarshalJSON keeps Credentials out of JSON, such as a JSON log of a struct that holds them.
func (c Credentials) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }

// AuthConnector is a Connector whose Clients can authenticate with credentials of their own.
type AuthConnector interface {
	Connector
	// WithAuth returns a Connector whose Clients send c as basic auth instead of the
	// connector's default credentials; zero Credentials (no username) mean the default ones.
	// It keeps the connector's other settings (a TLSConnector's trust). Connections are pooled
	// per credentials too, so they are never shared between Clients of different credentials.
	WithAuth(c Credentials) Connector
}
