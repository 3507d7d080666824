package sim

import (
	"slices"
	"strings"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim/bolt"
)

// showAuth answers the auth reads (HandleAuthQuery's SHOW cases, interpreter.cpp 1432–1590 and
// 1731–1741; the rows of auth_handler.cpp), which either role answers.
func (w *World) showAuth(in *instance, st *authStmt, user string) bolt.Outcome {
	data := in.auth
	var rows [][]any
	switch st.action {
	case aShowUsers:
		if data != nil {
			for _, name := range sortedNames(data.users) {
				rows = append(rows, []any{name})
			}
		}
	case aShowRoles:
		if data != nil {
			for _, name := range sortedNames(data.roles) {
				rows = append(rows, []any{name, data.roles[name].builtin})
			}
		}
	case aShowCurrentUser:
		if user == "" || !data.accessControlled() {
			rows = [][]any{{nil}}
		} else {
			rows = [][]any{{strings.ToLower(user)}}
		}
	case aShowRolesForUser:
		u := data.user(st.name)
		if u == nil {
			return failure(msgNoUser(st.name))
		}
		for _, r := range slices.Sorted(slices.Values(u.roles)) {
			rows = append(rows, []any{r})
		}
	case aShowPrivileges:
		return w.showPrivileges(in, st)
	case aShowDatabasePrivileges:
		return showDatabasePrivileges(data, st)
	}
	return bolt.Outcome{Rows: rows, Type: "r"}
}

// showPrivileges answers SHOW PRIVILEGES FOR on the database its ON clause names (the default
// database without one, which Memgraph refuses for a user once there is another database).
func (w *World) showPrivileges(in *instance, st *authStmt) bolt.Outcome {
	data := in.auth
	u, r, f := authTarget(data, st, msgNoUserOrRole)
	if f != nil {
		return bolt.Outcome{Err: f}
	}
	db := defaultDB
	switch st.dbSpec {
	case "":
		if len(in.txns) > 1 && u != nil {
			return failure(msgShowPrivilegesMT)
		}
	case "MAIN":
		main := mainDatabaseOf(u, r)
		if main == "" {
			return failure(msgShowPrivilegesMain)
		}
		db = main
	case "DATABASE":
		db = st.db
	}
	if _, ok := in.txns[db]; !ok {
		return failure(msgUnknownDatabase(db))
	}
	if u != nil {
		return bolt.Outcome{Rows: userPrivilegeRows(data, u, db), Type: "r"}
	}
	return bolt.Outcome{Rows: rolePrivilegeRows(r, db), Type: "r"}
}

// mainDatabaseOf is the main database of the user (or else the role), "" when it may not use it.
func mainDatabaseOf(u *authUser, r *authRole) string {
	d := databases{}
	if u != nil {
		d = u.db
	} else if r != nil {
		d = r.db
	}
	if d.main == "" || !d.contains(d.main) {
		return ""
	}
	return d.main
}

// userPrivilegeRows are ShowUserPrivileges' rows (auth_handler.cpp 96–125) and the label and
// edge-type rows of the user's roles.
func userPrivilegeRows(data *authData, u *authUser, db string) [][]any {
	all := data.permissionsOn(u, db)
	own := permissions{}
	if u.db.contains(db) {
		own = u.perms
	}
	roles := data.rolePermissionsOn(u, db)
	var rows [][]any
	for _, p := range privilegesAll {
		bit := privilegeBit(p)
		level := all.level(bit)
		if level == "" {
			continue
		}
		var parts []string
		if l := own.level(bit); l != "" {
			parts = append(parts, described(l)+" TO USER")
		}
		if l := roles.level(bit); l != "" {
			parts = append(parts, described(l)+" TO ROLE")
		}
		rows = append(rows, []any{string(p), level, strings.Join(parts, ", ")})
	}
	var label []*authRole
	for _, r := range data.userRoles(u) {
		if r.db.contains(db) {
			label = append(label, r)
		}
	}
	return append(rows, labelRows(label)...)
}

// rolePrivilegeRows are ShowRolePrivileges' rows (auth_handler.cpp 127–147) and its label rows.
func rolePrivilegeRows(r *authRole, db string) [][]any {
	perms := r.permissionsOn(db)
	var rows [][]any
	for _, p := range privilegesAll {
		if level := perms.level(privilegeBit(p)); level != "" {
			rows = append(rows, []any{string(p), level, described(level) + " TO ROLE"})
		}
	}
	if r.db.contains(db) {
		rows = append(rows, labelRows([]*authRole{r})...)
	}
	return rows
}

// labelRows are the roles' label and edge-type rows, one per permission with the descriptions of
// every role that has it joined (DeduplicatePermissionRows).
func labelRows(roles []*authRole) [][]any {
	var rows [][]any
	seen := map[string]int{}
	for _, r := range roles {
		for _, lr := range r.labelRows {
			if i, ok := seen[lr[0]]; ok {
				rows[i][2] = rows[i][2].(string) + ", " + lr[1]
				continue
			}
			seen[lr[0]] = len(rows)
			rows = append(rows, []any{lr[0], "GRANT", lr[1]})
		}
	}
	return rows
}

func described(level string) string {
	if level == "DENY" {
		return "DENIED"
	}
	return "GRANTED"
}

// showDatabasePrivileges answers SHOW DATABASE PRIVILEGES FOR: the user's and its roles'
// databases together, or a role's (GetDatabasePrivileges, auth_handler.cpp 644–689).
func showDatabasePrivileges(data *authData, st *authStmt) bolt.Outcome {
	var u *authUser
	if st.targetType != "ROLE" {
		u = data.user(st.name)
	}
	r := data.role(st.name)
	if st.targetType == "USER" {
		r = nil
	}
	if st.targetType == "" && u != nil && r != nil {
		return failure(msgAmbiguous(st.name))
	}
	var sets []databases
	switch {
	case u != nil:
		sets = append(sets, u.db)
		for _, role := range data.userRoles(u) {
			sets = append(sets, role.db)
		}
	case r != nil:
		sets = append(sets, r.db)
	default:
		return failure(msgDatabasePrivilegesMissing(st.targetType, st.name))
	}
	all, grants, denies := false, []string{}, []string{}
	for _, d := range sets {
		all = all || d.all
		for _, g := range d.grants {
			grants = addName(grants, g)
		}
		for _, dn := range d.denies {
			denies = addName(denies, dn)
		}
	}
	var granted any = "*"
	if !all {
		granted = toAny(grants)
	}
	return bolt.Outcome{Rows: [][]any{{granted, toAny(denies)}}, Type: "r"}
}

func toAny(names []string) []any {
	out := make([]any, len(names))
	for i, n := range names {
		out[i] = n
	}
	return out
}
