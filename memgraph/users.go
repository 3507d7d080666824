package memgraph

import (
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
)

// Memgraph 3.12's users, roles and privileges, as its auth queries name and show them (Memgraph
// v3.12.0 src/query/frontend/opencypher/grammar/MemgraphCypher.g4 487–632, the interpreter's
// HandleAuthQuery in src/query/interpreter.cpp 982–1830, src/glue/auth_handler.cpp). Auth
// queries run on the MAIN only: a REPLICA refuses every one that writes ("Query forbidden on the
// replica! …", interpreter.cpp 1045–1063), and the MAIN replicates each change to its replicas as
// a system transaction (UpdateAuthDataRpc and DropAuthDataRpc, src/auth/auth.cpp 123–190; a
// replica that missed some gets every user and role in SystemRecoveryRpc,
// src/replication_handler/include/replication_handler/replication_handler.hpp 96–135). Users and
// roles live in the instance's auth store (<data-directory>/auth, src/memgraph.cpp 694), not in
// its snapshots.

// Privileges are Memgraph 3.12's privileges, in the order SHOW PRIVILEGES lists them
// (kPrivilegesAll, src/query/frontend/ast/query/auth_query.hpp 228–261).
var Privileges = []string{"CREATE", "DELETE", "MATCH", "MERGE", "SET", "REMOVE", "INDEX", "STATS", "AUTH",
	"CONSTRAINT", "DUMP", "REPLICATION", "READ_FILE", "DURABILITY", "FREE_MEMORY", "TRIGGER", "CONFIG", "STREAM",
	"MODULE_READ", "MODULE_WRITE", "WEBSOCKET", "TRANSACTION_MANAGEMENT", "STORAGE_MODE", "MULTI_DATABASE_EDIT",
	"MULTI_DATABASE_USE", "COORDINATOR", "IMPERSONATE_USER", "PROFILE_RESTRICTION", "PARALLEL_EXECUTION",
	"SERVER_SIDE_PARAMETERS", "SERVER_SIDE_DESCRIPTIONS", "RELOAD_TLS"}

// UngrantablePrivilege is the one privilege of Privileges that GRANT, DENY and REVOKE cannot name:
// the grammar's privilege rule (MemgraphCypher.g4 568–599) has no SERVER_SIDE_DESCRIPTIONS, so only
// ALL PRIVILEGES grants or revokes it.
const UngrantablePrivilege = "SERVER_SIDE_DESCRIPTIONS"

// Grantable reports whether GRANT, DENY and REVOKE can name privilege p.
func Grantable(p string) bool { return p != UngrantablePrivilege && slices.Contains(Privileges, p) }

// BuiltinRoles are the roles Memgraph 3.12 Enterprise creates with its first user (admin: every
// privilege and database; readwrite: CREATE, DELETE, MERGE, SET, REMOVE, INDEX and MATCH;
// readonly: MATCH and STATS; each with every label and edge type — src/auth/auth.cpp 1092–1150).
var BuiltinRoles = []string{"admin", "readwrite", "readonly"}

// AllDatabases is the wildcard of GRANT, DENY and REVOKE DATABASE and of SHOW DATABASE
// PRIVILEGES' grants.
const AllDatabases = "*"

// AuthTarget is the user or role an auth query names.
type AuthTarget struct {
	Name string
	Role bool
}

// UserTarget and RoleTarget name a user and a role.
func UserTarget(name string) AuthTarget { return AuthTarget{Name: name} }
func RoleTarget(name string) AuthTarget { return AuthTarget{Name: name, Role: true} }

// String is "user alice" or "role readers".
func (t AuthTarget) String() string {
	if t.Role {
		return "role " + t.Name
	}
	return "user " + t.Name
}

// clause is the userOrRole of the grammar, with its keyword: USER `alice`, ROLE `readers`.
func (t AuthTarget) clause() string {
	if t.Role {
		return "ROLE " + quoteAuthName(t.Name)
	}
	return "USER " + quoteAuthName(t.Name)
}

// RoleInfo is one row of SHOW ROLES.
type RoleInfo struct {
	Name    string
	Builtin bool
}

// PrivilegeRow is one row of SHOW PRIVILEGES FOR: a privilege name (or, for a label, edge-type
// or property permission, its description such as "CREATE, READ ON ALL LABELS"), GRANT or DENY,
// and where it comes from ("GRANTED TO USER", "GRANTED TO USER, DENIED TO ROLE", "GRANTED TO
// ROLE", …; auth_handler.cpp 58–136).
type PrivilegeRow struct {
	Privilege   string
	Effective   string
	Description string
}

// Effective values of SHOW PRIVILEGES.
const (
	EffectiveGrant = "GRANT"
	EffectiveDeny  = "DENY"
)

// UserLevel is the level the user itself holds the privilege at, without its roles: GRANT, DENY
// or "" (the row comes from its roles alone). The description names the user's part first.
func (r PrivilegeRow) UserLevel() string {
	switch {
	case strings.HasPrefix(r.Description, "GRANTED TO USER"):
		return EffectiveGrant
	case strings.HasPrefix(r.Description, "DENIED TO USER"):
		return EffectiveDeny
	}
	return ""
}

// RoleLevel is a role's own level of the row's privilege: a role has no roles of its own, so it is
// the effective one.
func (r PrivilegeRow) RoleLevel() string { return r.Effective }

// System reports whether the row is one of Privileges rather than a label, edge-type or property
// permission.
func (r PrivilegeRow) System() bool { return slices.Contains(Privileges, r.Privilege) }

// DatabaseAccess is the one row of SHOW DATABASE PRIVILEGES FOR: the databases granted ("*"
// alone, All, when any of the user's or its roles' grants is every database) and denied, the
// user's and its roles' together (auth_handler.cpp 151–192).
type DatabaseAccess struct {
	All     bool
	Granted []string
	Denied  []string
}

// Password is a password as CREATE USER … IDENTIFIED BY and SET PASSWORD FOR … TO take it. The
// hook sends only bcrypt hashes ("bcrypt:$2a$…", which Memgraph stores as they are,
// src/auth/crypto.cpp 262–299 and auth.cpp 746–756), so the password itself never reaches
// Memgraph or its logs. A Password never prints, logs or marshals its content.
type Password struct{ value string }

// PasswordHash makes a Password of a bcrypt hash, "bcrypt:" and the hash's 60 characters.
func PasswordHash(hash string) Password { return Password{value: hash} }

// IsZero reports whether p holds nothing.
func (p Password) IsZero() bool { return p.value == "" }

const redactedPassword = "<redacted>"

func (p Password) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, redactedPassword) }
func (p Password) LogValue() slog.Value       { return slog.StringValue(redactedPassword) }
func (p Password) MarshalJSON() ([]byte, error) {
	return []byte(`"` + redactedPassword + `"`), nil
}

// bcryptPrefix is how Memgraph tells a user-defined bcrypt hash from a password (crypto.cpp
// 262–275: the algorithm's name and a colon, then the 60-character hash).
const bcryptPrefix = "bcrypt:"

// ValidatePasswordHash checks that p is "bcrypt:" and a 60-character bcrypt hash ($2a$, $2b$ or
// $2y$, a two-digit cost, 53 characters of bcrypt's alphabet).
func ValidatePasswordHash(p Password) error {
	h, ok := strings.CutPrefix(p.value, bcryptPrefix)
	if !ok || len(h) != 60 || h[0] != '$' || h[1] != '2' || !strings.ContainsRune("aby", rune(h[2])) || h[3] != '$' ||
		!isDigit(h[4]) || !isDigit(h[5]) || h[6] != '$' {
		return invalidArgument("a password must be sent as a bcrypt hash (bcrypt:$2a$NN$ and 53 characters)")
	}
	for _, c := range h[7:] {
		if !(c == '.' || c == '/' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return invalidArgument("a bcrypt hash holds only '.', '/', letters and digits after its cost")
		}
	}
	return nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// quoteAuthName renders a user, role or database name back-quoted, inner back-quotes doubled: a
// symbolic name whatever its characters, and never a keyword of the auth grammar.
func quoteAuthName(name string) string { return "`" + strings.ReplaceAll(name, "`", "``") + "`" }

// ValidateAuthName checks a user or role name: 1..128 characters of letters, digits and
// "_.@+-", all Memgraph's default --auth-user-or-role-name-regex ([a-zA-Z0-9_.+-@]+) accepts and
// no character a back-quoted name would need escaped.
func ValidateAuthName(name string) error {
	if name == "" || len(name) > 128 {
		return invalidArgument("user or role name %q must be 1..128 characters", name)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_.@+-", r)) {
			return invalidArgument("user or role name %q may contain only letters, digits and '_', '.', '@', '+', '-'", name)
		}
	}
	return nil
}
