package sim

import (
	"context"
	"regexp"
	"slices"
	"strings"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim/bolt"
)

// nameRegex is Memgraph's default --auth-user-or-role-name-regex (src/glue/auth_global.hpp 15):
// "+-@" is a range, as in std::regex.
var nameRegex = regexp.MustCompile(`^[a-zA-Z0-9_.+-@]+$`)

// prepareAuth prepares an auth query on a data instance (PrepareAuthQuery, interpreter.cpp
// 5367–5410, and HandleAuthQuery): refused in an explicit transaction, a password that is no
// string literal refused as the parser does, and a query that changes users or roles refused on
// a REPLICA; the query itself runs at PULL.
func (w *World) prepareAuth(in *instance, st *authStmt, req bolt.Request) (*bolt.Prepared, *bolt.Failure) {
	if req.ExplicitTx {
		return nil, bolt.ClientError(msgUserModificationTx)
	}
	var password *string
	if st.hasPassword {
		switch v := st.password.(type) {
		case string:
			password = &v
		case nil:
		default:
			return nil, bolt.ClientError(msgPasswordLiteral)
		}
	}
	if st.action.writes() && w.dataRole(in) != "main" {
		return nil, bolt.ClientError(msgAuthOnReplica)
	}
	return &bolt.Prepared{Fields: authFields(st.action), Exec: func(context.Context) bolt.Outcome {
		if st.action.writes() {
			return w.changeAuth(in, st, password)
		}
		return w.showAuth(in, st, req.User)
	}}, nil
}

func authFields(a authAction) []string {
	switch a {
	case aShowUsers:
		return []string{"user"}
	case aShowRoles:
		return []string{"role", "builtin"}
	case aShowPrivileges:
		return []string{"privilege", "effective", "description"}
	case aShowRolesForUser:
		return []string{"role"}
	case aShowDatabasePrivileges:
		return []string{"grants", "denies"}
	case aShowCurrentUser:
		return []string{"user"}
	}
	return []string{}
}

// changeAuth runs a query that changes the MAIN's users or roles on a copy of its store, keeps
// the copy when it succeeds and replicates it to the MAIN's replicas.
func (w *World) changeAuth(in *instance, st *authStmt, password *string) bolt.Outcome {
	data := in.auth.clone()
	out := w.applyAuth(in, data, st, password)
	if out.Err == nil {
		in.auth = data
		w.replicateAuth(in)
	}
	return out
}

func (w *World) applyAuth(in *instance, data *authData, st *authStmt, password *string) bolt.Outcome {
	switch st.action {
	case aCreateUser:
		return createUser(data, st, password)
	case aSetPassword:
		u := data.user(st.name)
		if u == nil {
			return failure(msgNoUser(st.name))
		}
		return setPassword(u, password)
	case aDropUser:
		if data.user(st.name) == nil {
			return failure(msgDropNoUser(st.name))
		}
		delete(data.users, strings.ToLower(st.name))
	case aCreateRole:
		return createRole(data, st)
	case aDropRole:
		return dropRole(data, st.name)
	case aSetRoles, aClearRoles:
		return setRoles(data, st)
	case aGrant, aDeny, aRevoke:
		return changePrivileges(data, st)
	case aGrantDatabase, aDenyDatabase, aRevokeDatabase, aSetMainDatabase:
		return w.changeDatabases(in, data, st)
	}
	return bolt.Outcome{Type: "rw"}
}

func createUser(data *authData, st *authStmt, password *string) bolt.Outcome {
	if !nameRegex.MatchString(st.name) {
		return failure(msgInvalidUserName)
	}
	if data.user(st.name) != nil {
		if st.ifNotExists {
			return bolt.Outcome{Type: "rw", Notifications: []map[string]any{noteUserExists(st.name)}}
		}
		return failure(msgUserExists(st.name))
	}
	first := len(data.users) == 0
	u := &authUser{name: strings.ToLower(st.name), db: defaultDatabases()}
	if out := setPassword(u, password); out.Err != nil {
		return out
	}
	data.users[u.name] = u
	if !first {
		return bolt.Outcome{Type: "rw", Notifications: []map[string]any{noteUserCreated(st.name, false, false, false)}}
	}
	// The first user (Auth::InitialiseFirstUser, auth.cpp 798–823): the built-in roles when there
	// are no roles yet, and the admin role, or else every privilege and database.
	created := len(data.roles) == 0
	if created {
		data.roles = builtinRoles()
	}
	if admin := data.role("admin"); admin != nil && admin.builtin {
		u.roles = []string{"admin"}
		return bolt.Outcome{Type: "rw", Notifications: []map[string]any{noteUserCreated(st.name, true, created, true)}}
	}
	u.perms.grant(allPrivileges)
	u.db.grant("*")
	return bolt.Outcome{Type: "rw", Notifications: []map[string]any{noteUserCreated(st.name, true, false, false)}}
}

// setPassword stores a bcrypt hash given as "bcrypt:" and its 60 characters as it is
// (UserDefinedHash, crypto.cpp 262–299) and any other password as given; nil removes it.
func setPassword(u *authUser, password *string) bolt.Outcome {
	u.hash, u.password = "", ""
	switch {
	case password == nil:
	case len(*password) == len("bcrypt:")+60 && strings.HasPrefix(*password, "bcrypt:"):
		u.hash = strings.TrimPrefix(*password, "bcrypt:")
	case *password == "":
		return failure(`The user password doesn't conform to the required strength! Regex: ".+"`)
	default:
		u.password = *password
	}
	return bolt.Outcome{Type: "rw"}
}

func createRole(data *authData, st *authStmt) bolt.Outcome {
	if !nameRegex.MatchString(st.name) {
		return failure("Invalid role name.")
	}
	if data.role(st.name) != nil {
		if st.ifNotExists {
			return bolt.Outcome{Type: "rw", Notifications: []map[string]any{noteRoleExists(st.name)}}
		}
		return failure(msgRoleExists(st.name))
	}
	name := strings.ToLower(st.name)
	data.roles[name] = &authRole{name: name, db: defaultDatabases()}
	return bolt.Outcome{Type: "rw", Notifications: []map[string]any{noteRoleCreated(st.name)}}
}

func dropRole(data *authData, name string) bolt.Outcome {
	r := data.role(name)
	if r == nil {
		return failure(msgNoRole(name))
	}
	for _, u := range data.users {
		if slices.Contains(u.roles, r.name) {
			return failure(msgRoleAssigned(r.name))
		}
	}
	delete(data.roles, r.name)
	return bolt.Outcome{Type: "rw"}
}

func setRoles(data *authData, st *authStmt) bolt.Outcome {
	u := data.user(st.name)
	if u == nil {
		return failure(msgNoUser(st.name))
	}
	var roles []string
	for _, name := range st.roles {
		r := data.role(name)
		if r == nil {
			return failure(msgNoRole(name))
		}
		if !slices.Contains(roles, r.name) {
			roles = append(roles, r.name)
		}
	}
	u.roles = roles
	return bolt.Outcome{Type: "rw"}
}

// target finds the user or role a userOrRole names (EditPermissions and DispatchUserOrRole):
// both is ambiguous, neither is missing (missing's text).
func authTarget(data *authData, st *authStmt, missing func(string) string) (*authUser, *authRole, *bolt.Failure) {
	var u *authUser
	var r *authRole
	if st.targetType != "ROLE" {
		u = data.user(st.name)
	}
	if st.targetType != "USER" {
		r = data.role(st.name)
	}
	switch {
	case u != nil && r != nil:
		return nil, nil, bolt.ClientError(msgAmbiguous(st.name))
	case u == nil && r == nil:
		return nil, nil, bolt.ClientError(missing(st.name))
	}
	return u, r, nil
}

func changePrivileges(data *authData, st *authStmt) bolt.Outcome {
	u, r, f := authTarget(data, st, msgNoUserOrRole)
	if f != nil {
		return bolt.Outcome{Err: f}
	}
	set := allPrivileges
	if !st.all {
		set = 0
		for _, p := range st.privileges {
			set |= privilegeBit(Privilege(p))
		}
	}
	var perms *permissions
	if u != nil {
		perms = &u.perms
	} else {
		perms = &r.perms
		r.builtin = false // editing a built-in role makes it a role like any other (auth_handler.cpp 1290)
	}
	switch st.action {
	case aGrant:
		perms.grant(set)
	case aDeny:
		perms.deny(set)
	case aRevoke:
		perms.revoke(set)
	}
	return bolt.Outcome{Type: "rw"}
}

// changeDatabases runs GRANT, DENY and REVOKE DATABASE and SET MAIN DATABASE: the database must
// exist (but for "*") before the user or role is looked up (interpreter.cpp 1645–1771).
func (w *World) changeDatabases(in *instance, data *authData, st *authStmt) bolt.Outcome {
	if _, ok := in.txns[st.db]; !ok && st.db != "*" {
		return failure(msgUnknownDatabase(st.db))
	}
	u, r, f := authTarget(data, st, msgNoUserNorRole)
	if f != nil {
		return bolt.Outcome{Err: f}
	}
	var dbs *databases
	if u != nil {
		dbs = &u.db
	} else {
		dbs = &r.db
	}
	switch st.action {
	case aGrantDatabase:
		dbs.grant(st.db)
	case aDenyDatabase:
		dbs.deny(st.db)
	case aRevokeDatabase:
		dbs.revoke(st.db)
	case aSetMainDatabase:
		if !dbs.contains(st.db) {
			return failure(msgSetMainDatabase(st.db, strings.ToLower(st.name)))
		}
		dbs.main = st.db
	}
	return bolt.Outcome{Type: "rw"}
}
