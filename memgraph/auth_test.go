package memgraph

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

// Neither fmt, log/slog (text or JSON) nor encoding/json shows a username or password, whether Credentials are
// printed themselves or as a field of something else.
func TestCredentialsNeverPrint(t *testing.T) {
	c := Credentials{Username: "user-4a1", Password: "pass-9c2"}
	holder := struct{ Auth Credentials }{c}
	var shown []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x"} {
		shown = append(shown, fmt.Sprintf(verb, c), fmt.Sprintf(verb, holder), fmt.Sprintf(verb, &c))
	}
	var text, logJSON bytes.Buffer
	slog.New(slog.NewTextHandler(&text, nil)).Info("m", "credentials", c, "holder", holder)
	slog.New(slog.NewJSONHandler(&logJSON, nil)).Info("m", "credentials", c, "holder", holder)
	marshaled, err := json.Marshal(holder)
	if err != nil {
		t.Fatal(err)
	}
	shown = append(shown, text.String(), logJSON.String(), string(marshaled))
	for _, s := range shown {
		if strings.Contains(s, c.Username) || strings.Contains(s, c.Password) {
			t.Errorf("credentials shown: %s", s)
		}
	}
	if !strings.Contains(shown[0], "redacted") {
		t.Errorf("%%v of Credentials = %q, want the placeholder", shown[0])
	}
}

func TestCredentialsIsZero(t *testing.T) {
	for _, tc := range []struct {
		c    Credentials
		want bool
	}{
		{Credentials{}, true},
		{Credentials{Password: "p"}, true},
		{Credentials{Username: "u"}, false},
		{Credentials{Username: "u", Password: "p"}, false},
	} {
		if got := tc.c.IsZero(); got != tc.want {
			t.Errorf("IsZero() = %v, want %v", got, tc.want)
		}
	}
}
