package memgraph

import (
	"slices"
	"strings"
)

// AuthKind is what an AuthStatement does.
type AuthKind string

// The auth statements the hook sends, by their leading words (MemgraphCypher.g4 491–556).
const (
	AuthCreateUser     AuthKind = "CREATE USER"
	AuthSetPassword    AuthKind = "SET PASSWORD"
	AuthDropUser       AuthKind = "DROP USER"
	AuthCreateRole     AuthKind = "CREATE ROLE"
	AuthGrant          AuthKind = "GRANT"
	AuthRevoke         AuthKind = "REVOKE"
	AuthDeny           AuthKind = "DENY"
	AuthSetRoles       AuthKind = "SET ROLE"
	AuthClearRoles     AuthKind = "CLEAR ROLE"
	AuthGrantDatabase  AuthKind = "GRANT DATABASE"
	AuthRevokeDatabase AuthKind = "REVOKE DATABASE"
	AuthDenyDatabase   AuthKind = "DENY DATABASE"
	AuthSetMainDB      AuthKind = "SET MAIN DATABASE"
)

// AuthStatement is one auth query, as plain values: the planner's output and the executor's
// input. Text renders it for people (logs, errors, status, a dry run's plan) with the password
// hidden; only Query, which the Client sends, holds it.
type AuthStatement struct {
	Kind   AuthKind
	Target AuthTarget
	// Privileges of GRANT, REVOKE and DENY, or AllPrivileges for ALL PRIVILEGES.
	Privileges    []string
	AllPrivileges bool
	// Roles of SET ROLE.
	Roles []string
	// Database of the DATABASE statements: a name, or AllDatabases.
	Database string
	// Password of CREATE USER and SET PASSWORD: a bcrypt hash (ValidatePasswordHash).
	Password Password
}

// Text is the statement as sent with the password written <redacted>.
func (s AuthStatement) Text() string { return s.render(redactedPassword) }

// String is Text.
func (s AuthStatement) String() string { return s.Text() }

// Redact is text with the statement's password written <redacted>.
func (s AuthStatement) Redact(text string) string {
	if s.Password.IsZero() {
		return text
	}
	return strings.ReplaceAll(text, s.Password.value, redactedPassword)
}

// Query is the statement exactly as sent. Validate it first (ValidateAuthStatement).
func (s AuthStatement) Query() string { return s.render(s.Password.value) }

func (s AuthStatement) render(password string) string {
	name := quoteAuthName(s.Target.Name)
	switch s.Kind {
	case AuthCreateUser:
		return "CREATE USER " + name + " IDENTIFIED BY " + quoteString(password)
	case AuthSetPassword:
		return "SET PASSWORD FOR " + name + " TO " + quoteString(password)
	case AuthDropUser:
		return "DROP USER " + name
	case AuthCreateRole:
		return "CREATE ROLE IF NOT EXISTS " + name
	case AuthGrant:
		return "GRANT " + s.privilegeList() + " TO " + s.Target.clause()
	case AuthDeny:
		return "DENY " + s.privilegeList() + " TO " + s.Target.clause()
	case AuthRevoke:
		return "REVOKE " + s.privilegeList() + " FROM " + s.Target.clause()
	case AuthSetRoles:
		roles := make([]string, len(s.Roles))
		for i, r := range s.Roles {
			roles[i] = quoteAuthName(r)
		}
		return "SET ROLE FOR " + name + " TO " + strings.Join(roles, ", ")
	case AuthClearRoles:
		return "CLEAR ROLE FOR " + name
	case AuthGrantDatabase:
		return "GRANT DATABASE " + databaseName(s.Database) + " TO " + s.Target.clause()
	case AuthRevokeDatabase:
		return "REVOKE DATABASE " + databaseName(s.Database) + " FROM " + s.Target.clause()
	case AuthDenyDatabase:
		return "DENY DATABASE " + databaseName(s.Database) + " FROM " + s.Target.clause()
	case AuthSetMainDB:
		return "SET MAIN DATABASE " + quoteAuthName(s.Database) + " FOR " + s.Target.clause()
	}
	return string(s.Kind)
}

func (s AuthStatement) privilegeList() string {
	if s.AllPrivileges {
		return "ALL PRIVILEGES"
	}
	return strings.Join(s.Privileges, ", ")
}

// databaseName is the wildcardName of the DATABASE statements: * or a back-quoted name.
func databaseName(db string) string {
	if db == AllDatabases {
		return AllDatabases
	}
	return quoteAuthName(db)
}

// ValidateAuthStatement checks a statement before anything is sent: names, privileges that GRANT
// can name, a database, a password that is a bcrypt hash. Invalid input is a KindInvalidArgument
// *Error whose message never holds the password.
func ValidateAuthStatement(s AuthStatement) error {
	if err := ValidateAuthName(s.Target.Name); err != nil {
		return err
	}
	userOnly := map[AuthKind]bool{AuthCreateUser: true, AuthSetPassword: true, AuthDropUser: true, AuthSetRoles: true, AuthClearRoles: true}
	switch {
	case userOnly[s.Kind] && s.Target.Role:
		return invalidArgument("%s names a user, not %s", s.Kind, s.Target)
	case s.Kind == AuthCreateRole && !s.Target.Role:
		return invalidArgument("CREATE ROLE names a role, not %s", s.Target)
	}
	switch s.Kind {
	case AuthCreateUser, AuthSetPassword:
		return ValidatePasswordHash(s.Password)
	case AuthDropUser, AuthCreateRole, AuthClearRoles:
		return nil
	case AuthGrant, AuthRevoke, AuthDeny:
		return validatePrivileges(s)
	case AuthSetRoles:
		if len(s.Roles) == 0 {
			return invalidArgument("SET ROLE needs at least one role (CLEAR ROLE removes them all)")
		}
		for _, r := range s.Roles {
			if err := ValidateAuthName(r); err != nil {
				return err
			}
		}
		return nil
	case AuthGrantDatabase, AuthRevokeDatabase, AuthDenyDatabase:
		if s.Database == AllDatabases {
			return nil
		}
		return ValidateDatabaseName(s.Database)
	case AuthSetMainDB:
		if s.Database == AllDatabases {
			return invalidArgument("SET MAIN DATABASE names one database, not %s", AllDatabases)
		}
		return ValidateDatabaseName(s.Database)
	}
	return invalidArgument("unknown auth statement %q", string(s.Kind))
}

func validatePrivileges(s AuthStatement) error {
	if s.AllPrivileges {
		if len(s.Privileges) > 0 {
			return invalidArgument("%s names ALL PRIVILEGES and a list", s.Kind)
		}
		return nil
	}
	if len(s.Privileges) == 0 {
		return invalidArgument("%s names no privilege", s.Kind)
	}
	for _, p := range s.Privileges {
		if !Grantable(p) {
			return invalidArgument("%s cannot name %q: not one of Memgraph 3.12's privileges it takes", s.Kind, p)
		}
	}
	return nil
}

// Read queries of users and roles (HandleAuthQuery's SHOW_* cases, interpreter.cpp 1432–1590,
// 1731–1741). SHOW PRIVILEGES names its database: without one Memgraph refuses it for a user once
// the instance has more than one database (1527–1533), and it shows a user's or role's privileges
// on a database it may use only.
const (
	ShowUsersQuery = "SHOW USERS"
	ShowRolesQuery = "SHOW ROLES"
)

// ShowPrivilegesQuery renders SHOW PRIVILEGES FOR t ON DATABASE db.
func ShowPrivilegesQuery(t AuthTarget, db string) string {
	return "SHOW PRIVILEGES FOR " + t.clause() + " ON DATABASE " + quoteAuthName(db)
}

// ShowRolesForUserQuery renders SHOW ROLES FOR USER user: the roles it has on every database.
func ShowRolesForUserQuery(user string) string { return "SHOW ROLES FOR USER " + quoteAuthName(user) }

// ShowDatabasePrivilegesQuery renders SHOW DATABASE PRIVILEGES FOR t.
func ShowDatabasePrivilegesQuery(t AuthTarget) string {
	return "SHOW DATABASE PRIVILEGES FOR " + t.clause()
}

// Columns of the auth reads.
const (
	colUser        = "user"
	colBuiltin     = "builtin"
	colPrivilege   = "privilege"
	colEffective   = "effective"
	colDescription = "description"
	colGrants      = "grants"
	colDenies      = "denies"
)

// ParseUsers reads SHOW USERS: one non-empty string per row (column user).
func ParseUsers(columns []string, rows [][]any) ([]string, error) {
	return parseNames(columns, rows, colUser, ShowUsersQuery)
}

// ParseRolesForUser reads SHOW ROLES FOR USER: one role per row (column role).
func ParseRolesForUser(columns []string, rows [][]any) ([]string, error) {
	return parseNames(columns, rows, colRole, "SHOW ROLES FOR USER")
}

func parseNames(columns []string, rows [][]any, column, query string) ([]string, error) {
	t := table{keys: columns, rows: rows}
	col, err := t.columns(column)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(rows))
	for i, row := range rows {
		r := rowReader{row: row, index: i, col: col}
		name := r.str(column)
		if r.err != nil {
			return nil, r.err
		}
		if name == "" {
			return nil, protocolError("%s row %d has an empty %s", query, i, column)
		}
		out = append(out, name)
	}
	return out, nil
}

// ParseRoles reads SHOW ROLES: columns role (a string) and builtin (a boolean).
func ParseRoles(columns []string, rows [][]any) ([]RoleInfo, error) {
	t := table{keys: columns, rows: rows}
	col, err := t.columns(colRole, colBuiltin)
	if err != nil {
		return nil, err
	}
	out := make([]RoleInfo, 0, len(rows))
	for i, row := range rows {
		r := rowReader{row: row, index: i, col: col}
		name := r.str(colRole)
		builtin, ok := r.value(colBuiltin).(bool)
		if !ok {
			r.mismatch(colBuiltin, "a boolean", r.value(colBuiltin))
		}
		if r.err != nil {
			return nil, r.err
		}
		if name == "" {
			return nil, protocolError("SHOW ROLES row %d has an empty role", i)
		}
		out = append(out, RoleInfo{Name: name, Builtin: builtin})
	}
	return out, nil
}

// ParsePrivileges reads SHOW PRIVILEGES FOR: privilege, effective and description, strings.
func ParsePrivileges(columns []string, rows [][]any) ([]PrivilegeRow, error) {
	t := table{keys: columns, rows: rows}
	col, err := t.columns(colPrivilege, colEffective, colDescription)
	if err != nil {
		return nil, err
	}
	out := make([]PrivilegeRow, 0, len(rows))
	for i, row := range rows {
		r := rowReader{row: row, index: i, col: col}
		p := PrivilegeRow{Privilege: r.str(colPrivilege), Effective: r.str(colEffective), Description: r.str(colDescription)}
		if r.err != nil {
			return nil, r.err
		}
		if p.Effective != EffectiveGrant && p.Effective != EffectiveDeny {
			return nil, protocolError("SHOW PRIVILEGES row %d has effective %q, want GRANT or DENY", i, p.Effective)
		}
		out = append(out, p)
	}
	return out, nil
}

// ParseDatabasePrivileges reads SHOW DATABASE PRIVILEGES FOR's one row: grants, "*" or a list
// of names, and denies, a list of names.
func ParseDatabasePrivileges(columns []string, rows [][]any) (DatabaseAccess, error) {
	t := table{keys: columns, rows: rows}
	col, err := t.columns(colGrants, colDenies)
	if err != nil {
		return DatabaseAccess{}, err
	}
	if len(rows) != 1 {
		return DatabaseAccess{}, protocolError("SHOW DATABASE PRIVILEGES answered %d rows, want 1", len(rows))
	}
	r := rowReader{row: rows[0], col: col}
	var out DatabaseAccess
	if s, ok := r.value(colGrants).(string); ok {
		if s != AllDatabases {
			return DatabaseAccess{}, protocolError("SHOW DATABASE PRIVILEGES grants %q, want * or a list", s)
		}
		out.All = true
	} else if out.Granted, err = stringList(r.value(colGrants), colGrants); err != nil {
		return DatabaseAccess{}, err
	}
	if out.Denied, err = stringList(r.value(colDenies), colDenies); err != nil {
		return DatabaseAccess{}, err
	}
	return out, nil
}

func stringList(v any, column string) ([]string, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, protocolError("SHOW DATABASE PRIVILEGES %s is %T, want a list", column, v)
	}
	out := make([]string, 0, len(list))
	for _, item := range list {
		s, ok := item.(string)
		if !ok {
			return nil, protocolError("SHOW DATABASE PRIVILEGES %s holds %T, want strings", column, item)
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return out, nil
}
