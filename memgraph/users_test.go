package memgraph

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A bcrypt hash of "secret" at cost 4, as Memgraph takes it.
const testHash = "bcrypt:$2a$04$Q5D9zQLcZYzQI3T9Y.I5jewgI4Ql6hRTZuE502eO0RI/yrGamRJda"

func TestAuthStatementsRenderAsMemgraph312ParsesThem(t *testing.T) {
	pw := PasswordHash(testHash)
	tests := []struct {
		s          AuthStatement
		query, txt string
	}{
		{AuthStatement{Kind: AuthCreateUser, Target: UserTarget("app"), Password: pw},
			"CREATE USER `app` IDENTIFIED BY '" + testHash + "'", "CREATE USER `app` IDENTIFIED BY '<redacted>'"},
		{AuthStatement{Kind: AuthSetPassword, Target: UserTarget("app-reader"), Password: pw},
			"SET PASSWORD FOR `app-reader` TO '" + testHash + "'", "SET PASSWORD FOR `app-reader` TO '<redacted>'"},
		{AuthStatement{Kind: AuthDropUser, Target: UserTarget("app")}, "DROP USER `app`", ""},
		{AuthStatement{Kind: AuthCreateRole, Target: RoleTarget("writers")}, "CREATE ROLE IF NOT EXISTS `writers`", ""},
		{AuthStatement{Kind: AuthGrant, Target: UserTarget("app"), Privileges: []string{"CREATE", "MATCH"}},
			"GRANT CREATE, MATCH TO USER `app`", ""},
		{AuthStatement{Kind: AuthGrant, Target: RoleTarget("admins"), AllPrivileges: true}, "GRANT ALL PRIVILEGES TO ROLE `admins`", ""},
		{AuthStatement{Kind: AuthRevoke, Target: UserTarget("app"), Privileges: []string{"DELETE"}}, "REVOKE DELETE FROM USER `app`", ""},
		{AuthStatement{Kind: AuthRevoke, Target: UserTarget("app"), AllPrivileges: true}, "REVOKE ALL PRIVILEGES FROM USER `app`", ""},
		{AuthStatement{Kind: AuthDeny, Target: UserTarget("app"), Privileges: []string{"DUMP"}}, "DENY DUMP TO USER `app`", ""},
		{AuthStatement{Kind: AuthSetRoles, Target: UserTarget("app"), Roles: []string{"readers", "writers"}},
			"SET ROLE FOR `app` TO `readers`, `writers`", ""},
		{AuthStatement{Kind: AuthClearRoles, Target: UserTarget("app")}, "CLEAR ROLE FOR `app`", ""},
		{AuthStatement{Kind: AuthGrantDatabase, Target: UserTarget("app"), Database: "sales"}, "GRANT DATABASE `sales` TO USER `app`", ""},
		{AuthStatement{Kind: AuthGrantDatabase, Target: RoleTarget("all"), Database: AllDatabases}, "GRANT DATABASE * TO ROLE `all`", ""},
		{AuthStatement{Kind: AuthRevokeDatabase, Target: UserTarget("app"), Database: "memgraph"}, "REVOKE DATABASE `memgraph` FROM USER `app`", ""},
		{AuthStatement{Kind: AuthDenyDatabase, Target: UserTarget("app"), Database: "memgraph"}, "DENY DATABASE `memgraph` FROM USER `app`", ""},
		{AuthStatement{Kind: AuthSetMainDB, Target: UserTarget("app"), Database: "sales"}, "SET MAIN DATABASE `sales` FOR USER `app`", ""},
	}
	for _, tt := range tests {
		if err := ValidateAuthStatement(tt.s); err != nil {
			t.Errorf("%s: %v", tt.query, err)
		}
		if got := tt.s.Query(); got != tt.query {
			t.Errorf("Query() = %s, want %s", got, tt.query)
		}
		want := tt.txt
		if want == "" {
			want = tt.query
		}
		if got := tt.s.Text(); got != want {
			t.Errorf("Text() = %s, want %s", got, want)
		}
	}
}

func TestAPasswordNeverPrints(t *testing.T) {
	s := AuthStatement{Kind: AuthCreateUser, Target: UserTarget("app"), Password: PasswordHash(testHash)}
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("statement", "s", s, "password", s.Password)
	js, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	for what, out := range map[string]string{
		"%v": fmt.Sprintf("%v", s), "%+v": fmt.Sprintf("%+v", s), "%#v": fmt.Sprintf("%#v", s.Password),
		"%s": fmt.Sprint(s), "json": string(js), "slog": logged.String(), "Text": s.Text(),
		"Redact": s.Redact("line 1:32 mismatched input '" + testHash + "'"),
	} {
		if strings.Contains(out, testHash[14:]) {
			t.Errorf("%s shows the password hash: %s", what, out)
		}
	}
}

func TestInvalidAuthStatementsAreRefusedBeforeSending(t *testing.T) {
	pw := PasswordHash(testHash)
	tests := map[string]AuthStatement{
		"plain password":           {Kind: AuthCreateUser, Target: UserTarget("app"), Password: PasswordHash("s3cret")},
		"hash with a quote":        {Kind: AuthSetPassword, Target: UserTarget("app"), Password: PasswordHash(testHash[:len(testHash)-1] + "'")},
		"no password":              {Kind: AuthCreateUser, Target: UserTarget("app")},
		"back-quote in a name":     {Kind: AuthDropUser, Target: UserTarget("a`b")},
		"empty name":               {Kind: AuthDropUser, Target: UserTarget("")},
		"a role as a user":         {Kind: AuthCreateUser, Target: RoleTarget("app"), Password: pw},
		"a user as a role":         {Kind: AuthCreateRole, Target: UserTarget("app")},
		"unknown privilege":        {Kind: AuthGrant, Target: UserTarget("app"), Privileges: []string{"READ"}},
		"ungrantable by name":      {Kind: AuthGrant, Target: UserTarget("app"), Privileges: []string{UngrantablePrivilege}},
		"no privilege":             {Kind: AuthRevoke, Target: UserTarget("app")},
		"all and a list":           {Kind: AuthDeny, Target: UserTarget("app"), AllPrivileges: true, Privileges: []string{"DUMP"}},
		"no role":                  {Kind: AuthSetRoles, Target: UserTarget("app")},
		"database with a NUL":      {Kind: AuthGrantDatabase, Target: UserTarget("app"), Database: "a\x00b"},
		"main database wildcard":   {Kind: AuthSetMainDB, Target: UserTarget("app"), Database: AllDatabases},
		"unknown kind":             {Kind: "ALTER USER", Target: UserTarget("app")},
		"name of 129 characters":   {Kind: AuthDropUser, Target: UserTarget(strings.Repeat("a", 129))},
		"role name with a newline": {Kind: AuthSetRoles, Target: UserTarget("app"), Roles: []string{"a\nb"}},
	}
	for name, s := range tests {
		err := ValidateAuthStatement(s)
		if KindOf(err) != KindInvalidArgument {
			t.Errorf("%s: %v, want an invalid-argument error", name, err)
			continue
		}
		if strings.Contains(err.Error(), testHash[14:]) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: the error shows the password: %v", name, err)
		}
	}
}

func TestParseAuthReads(t *testing.T) {
	users, err := ParseUsers([]string{"user"}, [][]any{{"hooks"}, {"app"}})
	if err != nil || !cmp.Equal(users, []string{"hooks", "app"}) {
		t.Errorf("ParseUsers = %v, %v", users, err)
	}
	roles, err := ParseRoles([]string{"role", "builtin"}, [][]any{{"admin", true}, {"writers", false}})
	if want := []RoleInfo{{"admin", true}, {"writers", false}}; err != nil || !cmp.Equal(roles, want) {
		t.Errorf("ParseRoles = %v, %v", roles, err)
	}
	rows := [][]any{{"CREATE", "GRANT", "GRANTED TO USER"}, {"MATCH", "DENY", "GRANTED TO USER, DENIED TO ROLE"},
		{"STATS", "GRANT", "GRANTED TO ROLE"}, {"CREATE, READ ON ALL LABELS", "GRANT", "GLOBAL LABEL PERMISSION GRANTED TO ROLE"}}
	privs, err := ParsePrivileges([]string{"privilege", "effective", "description"}, rows)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range privs {
		got = append(got, fmt.Sprintf("%s %s user=%q system=%v", p.Privilege, p.Effective, p.UserLevel(), p.System()))
	}
	want := []string{`CREATE GRANT user="GRANT" system=true`, `MATCH DENY user="GRANT" system=true`,
		`STATS GRANT user="" system=true`, `CREATE, READ ON ALL LABELS GRANT user="" system=false`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("privilege rows (-want +got):\n%s", diff)
	}
	all, err := ParseDatabasePrivileges([]string{"grants", "denies"}, [][]any{{"*", []any{"sales"}}})
	if want := (DatabaseAccess{All: true, Denied: []string{"sales"}}); err != nil || !cmp.Equal(all, want) {
		t.Errorf("ParseDatabasePrivileges(*) = %+v, %v", all, err)
	}
	some, err := ParseDatabasePrivileges([]string{"grants", "denies"}, [][]any{{[]any{"sales", "memgraph"}, []any{}}})
	if want := (DatabaseAccess{Granted: []string{"memgraph", "sales"}, Denied: []string{}}); err != nil || !cmp.Equal(some, want) {
		t.Errorf("ParseDatabasePrivileges(list) = %+v, %v", some, err)
	}
}

func TestMalformedAuthReadsAreProtocolErrors(t *testing.T) {
	for name, err := range map[string]error{
		"users without the column": func() error { _, err := ParseUsers([]string{"name"}, nil); return err }(),
		"empty user":               func() error { _, err := ParseUsers([]string{"user"}, [][]any{{""}}); return err }(),
		"builtin not a boolean":    func() error { _, err := ParseRoles([]string{"role", "builtin"}, [][]any{{"a", "yes"}}); return err }(),
		"effective NEUTRAL": func() error {
			_, err := ParsePrivileges([]string{"privilege", "effective", "description"}, [][]any{{"CREATE", "NEUTRAL", ""}})
			return err
		}(),
		"grants a string other than *": func() error {
			_, err := ParseDatabasePrivileges([]string{"grants", "denies"}, [][]any{{"memgraph", []any{}}})
			return err
		}(),
		"two rows": func() error {
			_, err := ParseDatabasePrivileges([]string{"grants", "denies"}, [][]any{{"*", []any{}}, {"*", []any{}}})
			return err
		}(),
		"denies of numbers": func() error {
			_, err := ParseDatabasePrivileges([]string{"grants", "denies"}, [][]any{{"*", []any{int64(1)}}})
			return err
		}(),
	} {
		if KindOf(err) != KindProtocol {
			t.Errorf("%s: %v, want a protocol error", name, err)
		}
	}
}
