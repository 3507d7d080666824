package planner

import (
	"slices"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
)

// RoleState is what the MAIN shows of a role: whether it exists, whether it is built in, its
// privileges (SHOW PRIVILEGES FOR ROLE, on roleReadDatabase) and its databases (SHOW DATABASE
// PRIVILEGES FOR ROLE).
type RoleState struct {
	Exists     bool
	Builtin    bool
	Privileges []memgraph.PrivilegeRow
	Databases  memgraph.DatabaseAccess
}

// UserState is what the MAIN shows of the user: whether it exists, its roles (SHOW ROLES FOR
// USER), its privileges on its main database (SHOW PRIVILEGES FOR USER … ON DATABASE) and its
// databases with its roles' (SHOW DATABASE PRIVILEGES FOR USER).
type UserState struct {
	Exists     bool
	Roles      []string
	Privileges []memgraph.PrivilegeRow
	Databases  memgraph.DatabaseAccess
}

// userInput is everything planUser decides on.
type userInput struct {
	Spec UserSpec
	// Declared are the cluster's declared roles the user names.
	Declared map[string]RoleSpec
	// HookUser is spec.auth's username, created first on a MAIN without any user.
	HookUser string
	// Users is SHOW USERS; Roles every role the user names, as the MAIN shows it.
	Users []string
	Roles map[string]RoleState
	User  UserState
	// PasswordChanged: the password Secret's version is not the one the status records as
	// applied (appliedPasswordVersion), so an existing user gets its password set.
	PasswordChanged bool
	// MainDatabase is the main database the status records the hook set ("" unknown).
	MainDatabase string
}

// AuthCommand is one statement of a MemgraphUser's pass. The hook fills its Password (a bcrypt
// hash) for CREATE USER and SET PASSWORD: spec.auth's for the hook's own user (HookUser), the
// password Secret's otherwise.
type AuthCommand struct {
	memgraph.AuthStatement
	HookUser bool
}

// NeedsPassword reports whether the command carries a password.
func (c AuthCommand) NeedsPassword() bool {
	return c.Kind == memgraph.AuthCreateUser || c.Kind == memgraph.AuthSetPassword
}

// userPlan is the statements that bring the MAIN to the declaration, in order, and the main
// database the user has once they ran (for the status's record).
type userPlan struct {
	Commands     []AuthCommand
	MainDatabase string
}

// planUser is the minimal statements, read before written, that give the MAIN the declared user:
// the hook's own user first on a MAIN without users (Memgraph makes the first user an admin, and
// a user created before it would lock the hook out); then each declared role the user names,
// created and brought to its declared privileges and databases; then the user — created with
// its password, or its password set when the Secret changed — with exactly its declared roles,
// privileges of its own and databases, and its main database. A built-in role is used as it is.
// A converged user plans nothing.
func planUser(in userInput) userPlan {
	var p userPlan
	if len(in.Users) == 0 {
		p.add(AuthCommand{AuthStatement: memgraph.AuthStatement{Kind: memgraph.AuthCreateUser, Target: memgraph.UserTarget(in.HookUser)}, HookUser: true})
	}
	for _, name := range in.Spec.Roles {
		if r, ok := in.Declared[name]; ok {
			p.role(r, in.Roles[name])
		}
	}
	p.user(in)
	return p
}

func (p *userPlan) add(cs ...AuthCommand) { p.Commands = append(p.Commands, cs...) }

func (p *userPlan) statements(ss ...memgraph.AuthStatement) {
	for _, s := range ss {
		p.add(AuthCommand{AuthStatement: s})
	}
}

// role brings a declared role to its declaration; a role that does not exist starts as Memgraph
// creates one: no privilege, the default database.
func (p *userPlan) role(r RoleSpec, st RoleState) {
	t := memgraph.RoleTarget(r.Name)
	if !st.Exists {
		p.statements(memgraph.AuthStatement{Kind: memgraph.AuthCreateRole, Target: t})
		st = RoleState{Databases: memgraph.DatabaseAccess{Granted: []string{memgraph.DefaultDatabase}}}
	}
	grants, denies := ownLevels(st.Privileges, memgraph.PrivilegeRow.RoleLevel)
	p.statements(privilegeStatements(t, r.Privileges, grants, denies)...)
	p.statements(databaseStatements(t, r.Databases, st.Databases, memgraph.DatabaseAccess{})...)
}

// user brings the user to its declaration.
func (p *userPlan) user(in userInput) {
	t := memgraph.UserTarget(in.Spec.Username)
	st, main := in.User, in.MainDatabase
	switch {
	case !st.Exists:
		p.statements(memgraph.AuthStatement{Kind: memgraph.AuthCreateUser, Target: t})
		st = UserState{Databases: memgraph.DatabaseAccess{Granted: []string{memgraph.DefaultDatabase}}}
		main = memgraph.DefaultDatabase
	case in.PasswordChanged:
		p.statements(memgraph.AuthStatement{Kind: memgraph.AuthSetPassword, Target: t})
	}
	if have := sortedUnique(st.Roles); !slices.Equal(have, in.Spec.Roles) {
		if len(in.Spec.Roles) == 0 {
			p.statements(memgraph.AuthStatement{Kind: memgraph.AuthClearRoles, Target: t})
		} else {
			p.statements(memgraph.AuthStatement{Kind: memgraph.AuthSetRoles, Target: t, Roles: in.Spec.Roles})
		}
	}
	grants, denies := ownLevels(st.Privileges, memgraph.PrivilegeRow.UserLevel)
	p.statements(privilegeStatements(t, in.Spec.Privileges, grants, denies)...)
	dbs := databaseStatements(t, in.Spec.Databases, st.Databases, rolesAccess(in))
	p.statements(dbs...)
	for _, s := range dbs {
		if s.Kind == memgraph.AuthRevokeDatabase && (s.Database == memgraph.AllDatabases || s.Database == main) {
			main = "" // Memgraph clears the main database with it (Databases::Revoke, models.cpp 1139–1150)
		}
	}
	if main != in.Spec.MainDatabase {
		p.statements(memgraph.AuthStatement{Kind: memgraph.AuthSetMainDB, Target: t, Database: in.Spec.MainDatabase})
	}
	p.MainDatabase = in.Spec.MainDatabase
}

// ownLevels are the privileges a role or user holds itself, granted and denied, from its SHOW
// PRIVILEGES rows (level reads a row's own part: RoleLevel or UserLevel).
func ownLevels(rows []memgraph.PrivilegeRow, level func(memgraph.PrivilegeRow) string) (grants, denies []string) {
	for _, r := range rows {
		if !r.System() {
			continue
		}
		switch level(r) {
		case memgraph.EffectiveGrant:
			grants = append(grants, r.Privilege)
		case memgraph.EffectiveDeny:
			denies = append(denies, r.Privilege)
		}
	}
	return grants, denies
}

// privilegeStatements bring a user's or role's own privileges from grants and denies to want:
// REVOKE what it has (or is denied) beyond want, GRANT what it lacks (a GRANT lifts a deny). A
// privilege to drop that REVOKE cannot name (memgraph.UngrantablePrivilege, which only ALL
// PRIVILEGES grants) takes REVOKE ALL PRIVILEGES and the GRANT of want.
func privilegeStatements(t memgraph.AuthTarget, want PrivilegeSet, grants, denies []string) []memgraph.AuthStatement {
	wanted := want.names()
	missing := inPrivilegeOrder(slices.DeleteFunc(slices.Clone(wanted), func(p string) bool { return slices.Contains(grants, p) }))
	extra := inPrivilegeOrder(slices.DeleteFunc(append(slices.Clone(grants), denies...), func(p string) bool { return slices.Contains(wanted, p) }))
	switch {
	case want.All && len(missing) > 0:
		return []memgraph.AuthStatement{{Kind: memgraph.AuthGrant, Target: t, AllPrivileges: true}}
	case slices.Contains(extra, memgraph.UngrantablePrivilege):
		out := []memgraph.AuthStatement{{Kind: memgraph.AuthRevoke, Target: t, AllPrivileges: true}}
		if len(wanted) > 0 {
			out = append(out, memgraph.AuthStatement{Kind: memgraph.AuthGrant, Target: t, Privileges: wanted})
		}
		return out
	}
	var out []memgraph.AuthStatement
	if len(extra) > 0 {
		out = append(out, memgraph.AuthStatement{Kind: memgraph.AuthRevoke, Target: t, Privileges: extra})
	}
	if len(missing) > 0 {
		out = append(out, memgraph.AuthStatement{Kind: memgraph.AuthGrant, Target: t, Privileges: missing})
	}
	return out
}

// rolesAccess is what the user's roles give it once the pass's role statements ran: a declared
// role's declared databases, a built-in role's as the MAIN shows them.
func rolesAccess(in userInput) memgraph.DatabaseAccess {
	var out memgraph.DatabaseAccess
	for _, name := range in.Spec.Roles {
		if r, ok := in.Declared[name]; ok {
			out.All = out.All || allDatabases(r.Databases)
			if !allDatabases(r.Databases) {
				out.Granted = append(out.Granted, r.Databases...)
			}
			continue
		}
		st := in.Roles[name].Databases
		out.All = out.All || st.All
		out.Granted = append(out.Granted, st.Granted...)
		out.Denied = append(out.Denied, st.Denied...)
	}
	out.Granted, out.Denied = sortedUnique(out.Granted), sortedUnique(out.Denied)
	return out
}

// databaseStatements bring what t may use to want ("*" alone: every database). have is what the
// MAIN shows — for a user its own and its roles' together, which Memgraph cannot tell apart — and
// roles what the roles give (nothing for a role), so that only what neither want nor a role
// explains is revoked: a database granted beyond want, any deny, every-database access t has of
// its own (REVOKE DATABASE *, which clears the rest too, then each database of want again).
func databaseStatements(t memgraph.AuthTarget, want []string, have, roles memgraph.DatabaseAccess) []memgraph.AuthStatement {
	grant := func(db string) memgraph.AuthStatement {
		return memgraph.AuthStatement{Kind: memgraph.AuthGrantDatabase, Target: t, Database: db}
	}
	revoke := func(db string) memgraph.AuthStatement {
		return memgraph.AuthStatement{Kind: memgraph.AuthRevokeDatabase, Target: t, Database: db}
	}
	ownDenies := slices.DeleteFunc(slices.Clone(have.Denied), func(d string) bool { return slices.Contains(roles.Denied, d) })
	if allDatabases(want) {
		if !have.All || len(ownDenies) > 0 {
			return []memgraph.AuthStatement{grant(memgraph.AllDatabases)} // GRANT DATABASE * lifts every deny too
		}
		return nil
	}
	var out []memgraph.AuthStatement
	if have.All && !roles.All {
		out = append(out, revoke(memgraph.AllDatabases))
		have = memgraph.DatabaseAccess{}
	}
	for _, db := range want {
		if !have.All && !slices.Contains(have.Granted, db) || slices.Contains(have.Denied, db) {
			out = append(out, grant(db))
		}
	}
	for _, db := range ownDenies {
		if !slices.Contains(want, db) {
			out = append(out, revoke(db))
		}
	}
	for _, db := range have.Granted {
		if !slices.Contains(want, db) && !slices.Contains(roles.Granted, db) && !slices.Contains(ownDenies, db) {
			out = append(out, revoke(db))
		}
	}
	return out
}

// planDrop is what deleting a MemgraphUser with deletionPolicy Delete sends: DROP USER while SHOW
// USERS lists it, nothing once it is gone. Its roles stay: other users may have them.
func planDrop(username string, users []string) []AuthCommand {
	if !slices.Contains(users, username) {
		return nil
	}
	return []AuthCommand{{AuthStatement: memgraph.AuthStatement{Kind: memgraph.AuthDropUser, Target: memgraph.UserTarget(username)}}}
}
