package sim

import "strings"

// The auth queries a data instance understands, as Memgraph 3.12's grammar has them
// (MemgraphCypher.g4 487–632), and CREATE DATABASE (814).

type authAction int

const (
	aShowUsers authAction = iota
	aShowRoles
	aShowPrivileges
	aShowRolesForUser
	aShowDatabasePrivileges
	aShowCurrentUser
	aCreateUser
	aSetPassword
	aDropUser
	aCreateRole
	aDropRole
	aSetRoles
	aClearRoles
	aGrant
	aDeny
	aRevoke
	aGrantDatabase
	aDenyDatabase
	aRevokeDatabase
	aSetMainDatabase
)

// writes reports whether the action changes the auth store (forbidden on a replica).
func (a authAction) writes() bool {
	return a >= aCreateUser
}

// authStmt is a parsed auth query, its literals unevaluated.
type authStmt struct {
	action      authAction
	name        string // the user, role or target
	targetType  string // "USER", "ROLE" or "" (either), for a userOrRole target
	ifNotExists bool
	hasPassword bool
	password    any      // the literal after IDENTIFIED BY or TO
	all         bool     // ALL PRIVILEGES
	privileges  []string // a privilege list
	roles       []string
	db          string // a database name or "*"
	dbSpec      string // SHOW PRIVILEGES' ON: "", "MAIN", "CURRENT" or "DATABASE"
}

// grantablePrivileges are the privilege rule's words (MemgraphCypher.g4 568–599): every one of
// privilegesAll but SERVER_SIDE_DESCRIPTIONS.
func grantablePrivilege(word string) bool {
	p := Privilege(strings.ToUpper(word))
	return p != "SERVER_SIDE_DESCRIPTIONS" && privilegeBit(p) != 0
}

// authQuery parses an auth query at the parser's position, or returns false when the words there
// start none.
func (p *parser) authQuery() (*statement, bool, error) {
	var st *authStmt
	var err error
	switch {
	case p.isKw(0, "SHOW") && p.isKw(1, "USERS"):
		p.pos += 2
		st = &authStmt{action: aShowUsers}
	case p.isKw(0, "SHOW") && (p.isKw(1, "ROLES") || p.isKw(1, "ROLE")) && p.isKw(2, "FOR"):
		p.pos += 3
		p.accept("USER")
		st = &authStmt{action: aShowRolesForUser}
		st.name, err = p.symbolicName()
	case p.isKw(0, "SHOW") && p.isKw(1, "ROLES"):
		p.pos += 2
		st = &authStmt{action: aShowRoles}
	case p.isKw(0, "SHOW") && p.isKw(1, "PRIVILEGES"):
		st, err = p.showPrivileges()
	case p.isKw(0, "SHOW") && p.isKw(1, "DATABASE") && p.isKw(2, "PRIVILEGES"):
		p.pos += 3
		st = &authStmt{action: aShowDatabasePrivileges}
		err = p.forTarget(st)
	case p.isKw(0, "SHOW") && p.isKw(1, "CURRENT") && p.isKw(2, "USER"):
		p.pos += 3
		st = &authStmt{action: aShowCurrentUser}
	case p.isKw(0, "CREATE") && (p.isKw(1, "USER") || p.isKw(1, "ROLE")):
		st, err = p.createUserOrRole()
	case p.isKw(0, "DROP") && (p.isKw(1, "USER") || p.isKw(1, "ROLE")):
		st = &authStmt{action: aDropUser}
		if p.isKw(1, "ROLE") {
			st.action = aDropRole
		}
		p.pos += 2
		st.name, err = p.symbolicName()
	case p.isKw(0, "SET") && p.isKw(1, "PASSWORD"):
		st, err = p.setPassword()
	case p.isKw(0, "SET") && (p.isKw(1, "ROLE") || p.isKw(1, "ROLES")) && p.isKw(2, "FOR"):
		st, err = p.setRoles()
	case p.isKw(0, "CLEAR") && (p.isKw(1, "ROLE") || p.isKw(1, "ROLES")):
		p.pos += 2
		st = &authStmt{action: aClearRoles}
		if err = p.expect("FOR"); err == nil {
			p.accept("USER")
			st.name, err = p.symbolicName()
		}
	case p.isKw(0, "SET") && p.isKw(1, "MAIN") && p.isKw(2, "DATABASE"):
		p.pos += 3
		st = &authStmt{action: aSetMainDatabase}
		if st.db, err = p.symbolicName(); err == nil {
			err = p.forTarget(st)
		}
	case p.isKw(0, "GRANT"), p.isKw(0, "DENY"), p.isKw(0, "REVOKE"):
		st, err = p.privilegeChange()
	default:
		return nil, false, nil
	}
	if err != nil {
		return nil, true, err
	}
	p.accept(";")
	if t := p.peek(); t.kind != tokEOF {
		return nil, true, p.unexpected(t, "<EOF>")
	}
	return &statement{kind: stAuth, auth: st}, true, nil
}

// userOrRole: ( USER | ROLE )? name.
func (p *parser) userOrRole(st *authStmt) error {
	switch {
	case p.accept("USER"):
		st.targetType = "USER"
	case p.accept("ROLE"):
		st.targetType = "ROLE"
	}
	var err error
	st.name, err = p.symbolicName()
	return err
}

func (p *parser) forTarget(st *authStmt) error {
	if err := p.expect("FOR"); err != nil {
		return err
	}
	return p.userOrRole(st)
}

// showPrivileges: SHOW PRIVILEGES FOR userOrRole ( ON ( MAIN | CURRENT | DATABASE name ) )?
func (p *parser) showPrivileges() (*authStmt, error) {
	p.pos += 2
	st := &authStmt{action: aShowPrivileges}
	if err := p.forTarget(st); err != nil {
		return nil, err
	}
	if !p.accept("ON") {
		return st, nil
	}
	switch {
	case p.accept("MAIN"):
		st.dbSpec = "MAIN"
	case p.accept("CURRENT"):
		st.dbSpec = "CURRENT"
	case p.accept("DATABASE"):
		st.dbSpec = "DATABASE"
		var err error
		st.db, err = p.symbolicName()
		return st, err
	default:
		return nil, p.unexpected(p.peek(), "{MAIN, CURRENT, DATABASE}")
	}
	return st, nil
}

// createUserOrRole: CREATE USER ifNotExists? name ( IDENTIFIED BY literal )? and CREATE ROLE
// ifNotExists? name.
func (p *parser) createUserOrRole() (*authStmt, error) {
	st := &authStmt{action: aCreateUser}
	if p.isKw(1, "ROLE") {
		st.action = aCreateRole
	}
	p.pos += 2
	if p.isKw(0, "IF") {
		if err := p.expect("IF", "NOT", "EXISTS"); err != nil {
			return nil, err
		}
		st.ifNotExists = true
	}
	var err error
	if st.name, err = p.symbolicName(); err != nil {
		return nil, err
	}
	if st.action == aCreateUser && p.accept("IDENTIFIED") {
		if err := p.expect("BY"); err != nil {
			return nil, err
		}
		st.hasPassword = true
		st.password, err = p.literal()
	}
	return st, err
}

// setPassword: SET PASSWORD FOR name TO literal.
func (p *parser) setPassword() (*authStmt, error) {
	p.pos += 2
	st := &authStmt{action: aSetPassword, hasPassword: true}
	if err := p.expect("FOR"); err != nil {
		return nil, err
	}
	var err error
	if st.name, err = p.symbolicName(); err != nil {
		return nil, err
	}
	if err := p.expect("TO"); err != nil {
		return nil, err
	}
	st.password, err = p.literal()
	return st, err
}

// setRoles: SET ( ROLE | ROLES ) FOR USER? name TO name ( , name )*.
func (p *parser) setRoles() (*authStmt, error) {
	p.pos += 3
	p.accept("USER")
	st := &authStmt{action: aSetRoles}
	var err error
	if st.name, err = p.symbolicName(); err != nil {
		return nil, err
	}
	if err := p.expect("TO"); err != nil {
		return nil, err
	}
	st.roles, err = p.nameList()
	return st, err
}

func (p *parser) nameList() ([]string, error) {
	var out []string
	for {
		name, err := p.symbolicName()
		if err != nil {
			return nil, err
		}
		out = append(out, name)
		if !p.accept(",") {
			return out, nil
		}
	}
}

// privilegeChange: GRANT | DENY | REVOKE ( ALL PRIVILEGES | privilege ( , privilege )* )
// ( TO | FROM ) userOrRole, and GRANT DATABASE … TO, DENY DATABASE … FROM, REVOKE DATABASE … FROM.
func (p *parser) privilegeChange() (*authStmt, error) {
	verb := strings.ToUpper(p.advance().text)
	st := &authStmt{}
	if p.accept("DATABASE") {
		st.action = map[string]authAction{"GRANT": aGrantDatabase, "DENY": aDenyDatabase, "REVOKE": aRevokeDatabase}[verb]
		if p.accept("*") {
			st.db = "*"
		} else {
			var err error
			if st.db, err = p.symbolicName(); err != nil {
				return nil, err
			}
		}
		to := "FROM"
		if verb == "GRANT" {
			to = "TO"
		}
		if err := p.expect(to); err != nil {
			return nil, err
		}
		return st, p.userOrRole(st)
	}
	st.action = map[string]authAction{"GRANT": aGrant, "DENY": aDeny, "REVOKE": aRevoke}[verb]
	if p.accept("ALL") {
		if err := p.expect("PRIVILEGES"); err != nil {
			return nil, err
		}
		st.all = true
	} else {
		for {
			t := p.peek()
			if t.kind != tokWord || !grantablePrivilege(t.text) {
				return nil, p.unexpected(t, "a privilege")
			}
			p.advance()
			st.privileges = append(st.privileges, strings.ToUpper(t.text))
			if !p.accept(",") {
				break
			}
		}
	}
	to := "TO"
	if verb == "REVOKE" {
		to = "FROM"
	}
	if err := p.expect(to); err != nil {
		return nil, err
	}
	return st, p.userOrRole(st)
}
