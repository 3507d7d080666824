package sim

import (
	"maps"
	"slices"
	"strings"

	"golang.org/x/crypto/bcrypt"
)

// A data instance's users and roles (Memgraph v3.12.0 src/auth/models.{hpp,cpp}, auth.cpp): each
// with privileges granted and denied, a user with its roles and a password, both with the
// databases they may use. An authData is never changed once an instance holds it: a change makes
// a copy (clone), so a MAIN's replicas can hold the very same value (system replication,
// replicateAuth).

// privilegesAll are Memgraph 3.12's privileges in the order SHOW PRIVILEGES lists them
// (kPrivilegesAll, src/query/frontend/ast/query/auth_query.hpp 228–261).
var privilegesAll = []Privilege{"CREATE", "DELETE", "MATCH", "MERGE", "SET", "REMOVE", "INDEX", "STATS", "AUTH",
	"CONSTRAINT", "DUMP", "REPLICATION", "READ_FILE", "DURABILITY", "FREE_MEMORY", "TRIGGER", "CONFIG", "STREAM",
	"MODULE_READ", "MODULE_WRITE", "WEBSOCKET", "TRANSACTION_MANAGEMENT", "STORAGE_MODE", "MULTI_DATABASE_EDIT",
	"MULTI_DATABASE_USE", "COORDINATOR", "IMPERSONATE_USER", "PROFILE_RESTRICTION", "PARALLEL_EXECUTION",
	"SERVER_SIDE_PARAMETERS", "SERVER_SIDE_DESCRIPTIONS", "RELOAD_TLS"}

// privSet is a set of privileges, one bit per index of privilegesAll.
type privSet uint64

var allPrivileges = privSet(1)<<len(privilegesAll) - 1

func privilegeBit(p Privilege) privSet {
	if i := slices.Index(privilegesAll, p); i >= 0 {
		return 1 << i
	}
	return 0
}

func privilegeSet(ps ...Privilege) privSet {
	var s privSet
	for _, p := range ps {
		s |= privilegeBit(p)
	}
	return s
}

// permissions are the grants and denies of a user or role (Permissions, models.cpp 246–276): a
// grant clears the deny, a deny clears the grant, a revoke clears both; a deny wins.
type permissions struct{ grants, denies privSet }

func (p *permissions) grant(s privSet)  { p.denies &^= s; p.grants |= s }
func (p *permissions) deny(s privSet)   { p.grants &^= s; p.denies |= s }
func (p *permissions) revoke(s privSet) { p.grants &^= s; p.denies &^= s }

func (p permissions) or(q permissions) permissions {
	return permissions{grants: p.grants | q.grants, denies: p.denies | q.denies}
}

// level is GRANT, DENY or "" (NEUTRAL) for one privilege.
func (p permissions) level(b privSet) string {
	switch {
	case p.denies&b != 0:
		return "DENY"
	case p.grants&b != 0:
		return "GRANT"
	}
	return ""
}

// databases are the databases a user or role may use (Databases, models.hpp 512–600, models.cpp
// 1123–1182): a new one may use the default database, which is its main database.
type databases struct {
	all            bool
	grants, denies []string // sorted
	main           string
}

func defaultDatabases() databases { return databases{grants: []string{defaultDB}, main: defaultDB} }

func (d *databases) grant(db string) {
	if db == "*" {
		d.all, d.grants, d.denies = true, nil, nil
		return
	}
	if d.all {
		d.all, d.grants = false, nil
	}
	d.grants = addName(d.grants, db)
	d.denies = removeName(d.denies, db)
}

func (d *databases) deny(db string) {
	if db == "*" {
		d.all, d.grants, d.denies = false, nil, nil
		return
	}
	d.denies = addName(d.denies, db)
	d.grants = removeName(d.grants, db)
}

func (d *databases) revoke(db string) {
	if db == "*" {
		d.all, d.grants, d.denies, d.main = false, nil, nil, ""
		return
	}
	d.denies = removeName(d.denies, db)
	if !d.all {
		d.grants = removeName(d.grants, db)
	}
	if d.main == db {
		d.main = ""
	}
}

func (d databases) grantsDB(db string) bool { return d.all || slices.Contains(d.grants, db) }
func (d databases) deniesDB(db string) bool { return slices.Contains(d.denies, db) }
func (d databases) contains(db string) bool { return !d.deniesDB(db) && d.grantsDB(db) }

func addName(list []string, name string) []string {
	if slices.Contains(list, name) {
		return list
	}
	out := append(slices.Clone(list), name)
	slices.Sort(out)
	return out
}

func removeName(list []string, name string) []string {
	return slices.DeleteFunc(slices.Clone(list), func(s string) bool { return s == name })
}

type authRole struct {
	name    string
	builtin bool
	perms   permissions
	db      databases
	// labelRows are the label and edge-type permission rows SHOW PRIVILEGES shows for it, as
	// [privilege, description] (built-in roles have them; the simulator does not enforce them).
	labelRows [][2]string
}

// permissionsOn is the role's permissions on db, none when it may not use db (Role::GetPermissions).
func (r *authRole) permissionsOn(db string) permissions {
	if r.db.contains(db) {
		return r.perms
	}
	return permissions{}
}

type authUser struct {
	name string
	// hash is the bcrypt hash of the password; password is one stored as given (DataSpec.Auth);
	// with neither the user has no password and any password logs in (User::CheckPassword).
	hash, password string
	perms          permissions
	roles          []string // by name, in the order given
	db             databases
}

func (u *authUser) checkPassword(password string) bool {
	switch {
	case u.hash != "":
		return bcrypt.CompareHashAndPassword([]byte(u.hash), []byte(password)) == nil
	case u.password != "":
		return u.password == password
	}
	return true
}

// authData is an instance's auth store; nil has no users.
type authData struct {
	users map[string]*authUser
	roles map[string]*authRole
}

func (a *authData) clone() *authData {
	out := &authData{users: map[string]*authUser{}, roles: map[string]*authRole{}}
	if a == nil {
		return out
	}
	for k, u := range a.users {
		c := *u
		c.roles = slices.Clone(u.roles)
		out.users[k] = &c
	}
	for k, r := range a.roles {
		c := *r
		out.roles[k] = &c
	}
	return out
}

// accessControlled: the instance has a user, so every login needs credentials.
func (a *authData) accessControlled() bool { return a != nil && len(a.users) > 0 }

func (a *authData) user(name string) *authUser {
	if a == nil {
		return nil
	}
	return a.users[strings.ToLower(name)]
}

func (a *authData) role(name string) *authRole {
	if a == nil {
		return nil
	}
	return a.roles[strings.ToLower(name)]
}

func (a *authData) userRoles(u *authUser) []*authRole {
	var out []*authRole
	for _, name := range u.roles {
		if r := a.role(name); r != nil {
			out = append(out, r)
		}
	}
	return out
}

// hasAccess: neither the user nor a role of it denies db, and one of them grants it
// (User::HasAccess, models.hpp 989–993).
func (a *authData) hasAccess(u *authUser, db string) bool {
	denied, granted := u.db.deniesDB(db), u.db.grantsDB(db)
	for _, r := range a.userRoles(u) {
		denied = denied || r.db.deniesDB(db)
		granted = granted || r.db.grantsDB(db)
	}
	return !denied && granted
}

// rolePermissionsOn is the union of the user's roles' permissions on db.
func (a *authData) rolePermissionsOn(u *authUser, db string) permissions {
	var p permissions
	for _, r := range a.userRoles(u) {
		p = p.or(r.permissionsOn(db))
	}
	return p
}

// permissionsOn is what the user may do on db (User::GetPermissions, models.hpp 1037–1046):
// nothing without access to db, its own and its roles' permissions when it may use db itself,
// its roles' alone otherwise.
func (a *authData) permissionsOn(u *authUser, db string) permissions {
	if !a.hasAccess(u, db) {
		return permissions{}
	}
	roles := a.rolePermissionsOn(u, db)
	if u.db.contains(db) {
		return u.perms.or(roles)
	}
	return roles
}

// authorized: the user may run a query needing need on db (AuthChecker::IsUserAuthorized).
func (a *authData) authorized(u *authUser, need privSet, db string) bool {
	p := a.permissionsOn(u, db)
	return a.hasAccess(u, db) && p.grants&need == need && p.denies&need == 0
}

// builtinRoles are the roles Memgraph 3.12 Enterprise creates with its first user when it has
// none (Auth::CreateBuiltinRoles, auth.cpp 1092–1150).
func builtinRoles() map[string]*authRole {
	all := databases{all: true, main: defaultDB}
	labelRows := func(label, edge string) [][2]string {
		return [][2]string{{label + " ON ALL LABELS", "GLOBAL LABEL PERMISSION GRANTED TO ROLE"},
			{edge + " ON ALL EDGE_TYPES", "GLOBAL EDGE_TYPE PERMISSION GRANTED TO ROLE"}}
	}
	const labelAll = "CREATE, READ, UPDATE(SET LABEL, REMOVE LABEL, SET PROPERTY, CREATE EDGE, DELETE EDGE), DELETE"
	const edgeAll = "CREATE, READ, UPDATE(SET PROPERTY), DELETE"
	return map[string]*authRole{
		"admin": {name: "admin", builtin: true, perms: permissions{grants: allPrivileges}, db: all,
			labelRows: labelRows(labelAll, edgeAll)},
		"readwrite": {name: "readwrite", builtin: true, db: defaultDatabases(), labelRows: labelRows(labelAll, edgeAll),
			perms: permissions{grants: privilegeSet("CREATE", "DELETE", "MERGE", "SET", "REMOVE", "INDEX", "MATCH")}},
		"readonly": {name: "readonly", builtin: true, db: defaultDatabases(), labelRows: labelRows("READ", "READ"),
			perms: permissions{grants: privilegeSet("MATCH", "STATS")}},
	}
}

// seedAuth is the auth store a data instance starts with (or starts over with, wiped): empty
// without DataSpec.Auth; with it, its one user, as an operator creates the first user — every
// privilege (InitialiseFirstUser, auth.cpp 798–823) — then denies it Auth.Denied, and the
// built-in roles the first user brings.
func seedAuth(a *Auth) *authData {
	if a == nil {
		return nil
	}
	u := &authUser{name: strings.ToLower(a.Username), password: a.Password, db: databases{all: true, main: defaultDB}}
	u.perms.grant(allPrivileges)
	u.perms.deny(privilegeSet(a.Denied...))
	return &authData{users: map[string]*authUser{u.name: u}, roles: builtinRoles()}
}

func sortedNames[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
