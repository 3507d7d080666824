package bolt

import (
	"errors"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// oneUser is fixed with Memgraph's authentication of one user: the basic (or none) scheme with
// exactly its credentials.
type oneUser struct {
	fixed
	got *[]string
}

func (u oneUser) Authenticate(scheme, principal, credentials string) bool {
	*u.got = append(*u.got, scheme+"/"+principal+"/"+credentials)
	return (scheme == "basic" || scheme == "none") && principal == "admin" && credentials == "s3cret"
}

// TestLoginIsCheckedInHelloForBolt4AndLogonForBolt5 follows Memgraph v3.12.0
// src/communication/bolt/v1/states/init.hpp: Bolt 4 authenticates with HELLO's fields, Bolt 5.1+
// with LOGON's (AuthenticateUser 114–160, missing fields defaulted 56–69 and 126–131); a refusal
// is FAILURE {Memgraph.ClientError.Security.Unauthenticated, "Authentication failure"} and the
// connection closes (HandleAuthFailure 34–42).
func TestLoginIsCheckedInHelloForBolt4AndLogonForBolt5(t *testing.T) {
	bolt44 := []byte{0, 2, 4, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	bolt52 := []byte{0, 0, 2, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	hello := func(auth map[string]any) Structure {
		m := map[string]any{"user_agent": "raw"}
		for k, v := range auth {
			m[k] = v
		}
		return Structure{Tag: tagHello, Fields: []any{m}}
	}
	logon := func(auth map[string]any) Structure { return Structure{Tag: tagLogon, Fields: []any{auth}} }
	good := map[string]any{"scheme": "basic", "principal": "admin", "credentials": "s3cret"}
	bad := map[string]any{"scheme": "basic", "principal": "admin", "credentials": "wrong"}
	cases := []struct {
		name  string
		offer []byte
		msgs  []Structure
		ok    bool
		seen  []string
	}{
		{"4.4 good", bolt44, []Structure{hello(good)}, true, []string{"basic/admin/s3cret"}},
		{"4.4 wrong password", bolt44, []Structure{hello(bad)}, false, []string{"basic/admin/wrong"}},
		{"4.4 no auth fields", bolt44, []Structure{hello(nil)}, false, []string{"none//"}},
		{"5.2 good", bolt52, []Structure{hello(nil), logon(good)}, true, []string{"basic/admin/s3cret"}},
		{"5.2 wrong password", bolt52, []Structure{hello(nil), logon(bad)}, false, []string{"basic/admin/wrong"}},
		{"5.2 kerberos", bolt52, []Structure{hello(nil), logon(map[string]any{"scheme": "kerberos", "credentials": "t"})}, false, []string{"kerberos//t"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var seen []string
			rc, _ := dialRawTo(t, oneUser{got: &seen}, tc.offer)
			rc.send(tc.msgs...)
			for range len(tc.msgs) - 1 {
				if m := rc.recv(); m.Tag != tagSuccess {
					t.Fatalf("reply before the login %+v", m)
				}
			}
			last := rc.recv()
			if tc.ok {
				rc.send(rawRun("ROWS"))
				if last.Tag != tagSuccess || rc.recv().Tag != tagSuccess {
					t.Fatalf("login reply %+v", last)
				}
			} else {
				want := Structure{Tag: tagFailure, Fields: []any{map[string]any{"code": CodeUnauthenticated, "message": "Authentication failure"}}}
				if d := cmp.Diff(want, last); d != "" {
					t.Fatalf("refused login (-want +got):\n%s", d)
				}
				if _, err := readMessage(rc.rw); !errors.Is(err, io.EOF) {
					t.Fatalf("the connection stays open after a refused login: %v", err)
				}
			}
			if !cmp.Equal(seen, tc.seen) {
				t.Fatalf("the handler saw %q, want %q", seen, tc.seen)
			}
		})
	}
}
