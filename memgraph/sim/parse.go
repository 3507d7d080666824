package sim

import (
	"fmt"
	"strings"
)

// stmtKind is the query a statement is, as Memgraph's grammar distinguishes them.
type stmtKind int

const (
	stOther stmtKind = iota // any non-coordinator query (Cypher, other admin queries)
	stShowInstances
	stShowInstance
	stShowCoordinatorSettings
	stShowReplicationLag
	stRegisterInstance
	stUnregisterInstance
	stDemoteInstance
	stSetInstanceToMain
	stAddCoordinator
	stRemoveCoordinator
	stUpdateConfigInstance
	stUpdateConfigCoordinator
	stYieldLeadership
	stForceReset
	stSetCoordinatorSetting
	// Replication queries a data instance understands (not coordinator queries).
	stShowReplicationRole
	stShowReplicas
	stRegisterReplica
	stDropReplica
	stSetReplicationRole
	// Snapshot queries (data instances).
	stCreateSnapshot
	stShowSnapshots
	stRecoverSnapshot
	// Multi-tenancy (data instances): CREATE DATABASE and SHOW DATABASES.
	stCreateDatabase
	stShowDatabases
	// RELOAD … TLS (ReloadSSLQuery), which coordinators and data instances of either role run.
	stReloadBoltTLS
	stReloadClusterTLS
	// Users and roles (authparse.go).
	stAuth
)

// isCoordinatorQuery reports whether the statement is a CoordinatorQuery in Memgraph's AST.
func (k stmtKind) isCoordinatorQuery() bool {
	return k >= stShowInstances && k <= stSetCoordinatorSetting
}

// isSnapshotQuery reports whether the statement is CREATE, SHOW or RECOVER SNAPSHOT(S).
func (k stmtKind) isSnapshotQuery() bool {
	return k >= stCreateSnapshot && k <= stRecoverSnapshot
}

// paramRef is a $parameter in an expression position.
type paramRef string

// configEntry is one `literal : (literal | parameter)` pair of a config map, unevaluated.
type configEntry struct {
	key, value any
}

type statement struct {
	kind   stmtKind
	name   string // instanceName (symbolic name)
	mode   string // "sync" (default), "async" or "strict_sync"
	id     any    // coordinatorServerId literal, unevaluated
	config []configEntry
	// SET COORDINATOR SETTING literals, unevaluated.
	settingName, settingValue any
	write                     bool // stOther: contains an updating clause
	// RECOVER SNAPSHOT: the path literal, unevaluated, and FORCE.
	snapshot any
	force    bool
	// stAuth: the auth query.
	auth *authStmt
	// stOther: the privileges its clauses need.
	clauses privSet
}

type parser struct {
	toks []token
	pos  int
}

// parseQuery parses one query. Keywords are case-insensitive; a trailing ';' is allowed.
func parseQuery(src string) (*statement, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	st, err := p.statement()
	if err != nil {
		return nil, err
	}
	// Statements parsed to the end must not have trailing input; replication admin queries and
	// other Cypher are only classified by their leading keywords.
	if st.kind.isCoordinatorQuery() || st.kind == stShowReplicationRole || st.kind == stShowReplicas || st.kind.isSnapshotQuery() ||
		st.kind == stCreateDatabase || st.kind == stShowDatabases {
		p.accept(";")
		if t := p.peek(); t.kind != tokEOF {
			return nil, p.unexpected(t, "<EOF>")
		}
	}
	return st, nil
}

func (p *parser) peek() token { return p.toks[p.pos] }

func (p *parser) peekAt(i int) token {
	if p.pos+i >= len(p.toks) {
		return p.toks[len(p.toks)-1]
	}
	return p.toks[p.pos+i]
}

func (p *parser) advance() token {
	t := p.toks[p.pos]
	if t.kind != tokEOF {
		p.pos++
	}
	return t
}

func isKeyword(t token, kw string) bool { return t.kind == tokWord && strings.EqualFold(t.text, kw) }

func (p *parser) isKw(i int, kw string) bool { return isKeyword(p.peekAt(i), kw) }

// accept consumes a keyword or a punctuation character if it is next.
func (p *parser) accept(s string) bool {
	t := p.peek()
	if isKeyword(t, s) || (t.kind == tokPunct && t.text == s) {
		p.advance()
		return true
	}
	return false
}

func (p *parser) expect(words ...string) error {
	for _, w := range words {
		if !p.accept(w) {
			return p.unexpected(p.peek(), w)
		}
	}
	return nil
}

func (p *parser) unexpected(t token, want string) error {
	return &syntaxError{line: t.line, col: t.col, msg: fmt.Sprintf("mismatched input '%s' expecting %s", t, want)}
}

func (p *parser) statement() (*statement, error) {
	if st, ok, err := p.authQuery(); ok {
		return st, err
	}
	switch {
	case p.isKw(0, "SHOW"):
		return p.show()
	case p.isKw(0, "REGISTER") && p.isKw(1, "INSTANCE"):
		return p.registerInstance()
	case p.isKw(0, "REGISTER") && p.isKw(1, "REPLICA"):
		return &statement{kind: stRegisterReplica}, nil
	case p.isKw(0, "UNREGISTER"):
		return p.namedInstance(stUnregisterInstance, "UNREGISTER", "INSTANCE")
	case p.isKw(0, "DEMOTE"):
		return p.namedInstance(stDemoteInstance, "DEMOTE", "INSTANCE")
	case p.isKw(0, "SET") && p.isKw(1, "INSTANCE"):
		st, err := p.namedInstance(stSetInstanceToMain, "SET", "INSTANCE")
		if err != nil {
			return nil, err
		}
		return st, p.expect("TO", "MAIN")
	case p.isKw(0, "SET") && p.isKw(1, "COORDINATOR"):
		return p.setCoordinatorSetting()
	case p.isKw(0, "SET") && p.isKw(1, "REPLICATION") && p.isKw(2, "ROLE"):
		return &statement{kind: stSetReplicationRole}, nil
	case p.isKw(0, "ADD") && p.isKw(1, "COORDINATOR"):
		return p.addCoordinator()
	case p.isKw(0, "REMOVE") && p.isKw(1, "COORDINATOR"):
		p.pos += 2
		id, err := p.literal()
		return &statement{kind: stRemoveCoordinator, id: id}, err
	case p.isKw(0, "UPDATE") && p.isKw(1, "CONFIG"):
		return p.updateConfig()
	case p.isKw(0, "YIELD") && p.isKw(1, "LEADERSHIP"):
		p.pos += 2
		return &statement{kind: stYieldLeadership}, nil
	case p.isKw(0, "FORCE") && p.isKw(1, "RESET"):
		p.pos += 2
		return &statement{kind: stForceReset}, p.expect("CLUSTER", "STATE")
	case p.isKw(0, "DROP") && p.isKw(1, "REPLICA"):
		return &statement{kind: stDropReplica}, nil
	case p.isKw(0, "CREATE") && p.isKw(1, "DATABASE"):
		p.pos += 2
		name, err := p.symbolicName()
		return &statement{kind: stCreateDatabase, name: name, write: true}, err
	case p.isKw(0, "CREATE") && p.isKw(1, "SNAPSHOT"):
		p.pos += 2
		return &statement{kind: stCreateSnapshot}, nil
	case p.isKw(0, "RECOVER") && p.isKw(1, "SNAPSHOT"):
		return p.recoverSnapshot()
	case p.isKw(0, "RELOAD"):
		return p.reloadTLS()
	}
	return p.other(), nil
}

// other classifies a query outside the coordinator grammar: whether it writes, and the
// privileges its clauses need (MATCH, CREATE, MERGE, DELETE, SET, REMOVE: required_privileges.cpp
// PreVisit 229–279).
func (p *parser) other() *statement {
	st := &statement{kind: stOther}
	for _, t := range p.toks {
		for _, kw := range []string{"CREATE", "MERGE", "DELETE", "SET", "REMOVE", "DETACH", "DROP"} {
			if isKeyword(t, kw) {
				st.write = true
			}
		}
		for _, kw := range []Privilege{"MATCH", "CREATE", "MERGE", "DELETE", "SET", "REMOVE"} {
			if isKeyword(t, string(kw)) {
				st.clauses |= privilegeBit(kw)
			}
		}
	}
	return st
}

// reloadTLS parses reloadSSLQuery: RELOAD ( BOLT_SERVER | INTRA_CLUSTER ) TLS
// (MemgraphCypher.g4:948).
func (p *parser) reloadTLS() (*statement, error) {
	st := &statement{kind: stReloadBoltTLS}
	switch {
	case p.isKw(1, "BOLT_SERVER"):
	case p.isKw(1, "INTRA_CLUSTER"):
		st.kind = stReloadClusterTLS
	default:
		return nil, p.unexpected(p.peekAt(1), "{BOLT_SERVER, INTRA_CLUSTER}")
	}
	p.pos += 2
	return st, p.expect("TLS")
}

func (p *parser) show() (*statement, error) {
	switch {
	case p.isKw(1, "INSTANCES"):
		p.pos += 2
		return &statement{kind: stShowInstances}, nil
	case p.isKw(1, "INSTANCE"):
		p.pos += 2
		return &statement{kind: stShowInstance}, nil
	case p.isKw(1, "COORDINATOR"):
		p.pos += 2
		return &statement{kind: stShowCoordinatorSettings}, p.expect("SETTINGS")
	case p.isKw(1, "REPLICATION") && p.isKw(2, "LAG"):
		p.pos += 3
		return &statement{kind: stShowReplicationLag}, nil
	case p.isKw(1, "REPLICATION") && p.isKw(2, "ROLE"):
		p.pos += 3
		return &statement{kind: stShowReplicationRole}, nil
	case p.isKw(1, "REPLICAS"):
		p.pos += 2
		return &statement{kind: stShowReplicas}, nil
	case p.isKw(1, "SNAPSHOTS"):
		p.pos += 2
		return &statement{kind: stShowSnapshots}, nil
	case p.isKw(1, "DATABASES"):
		p.pos += 2
		return &statement{kind: stShowDatabases}, nil
	}
	return p.other(), nil
}

func (p *parser) namedInstance(kind stmtKind, words ...string) (*statement, error) {
	if err := p.expect(words...); err != nil {
		return nil, err
	}
	name, err := p.symbolicName()
	return &statement{kind: kind, name: name}, err
}

// symbolicName is a bare identifier (keywords allowed, as in Memgraph's grammar) or a
// back-quoted name.
func (p *parser) symbolicName() (string, error) {
	t := p.peek()
	if t.kind != tokWord && t.kind != tokQuoted {
		return "", p.unexpected(t, "a symbolic name")
	}
	p.advance()
	return t.text, nil
}

func (p *parser) registerInstance() (*statement, error) {
	st, err := p.namedInstance(stRegisterInstance, "REGISTER", "INSTANCE")
	if err != nil {
		return nil, err
	}
	st.mode = "sync" // no AS clause means SYNC; there is no AS SYNC keyword
	if p.accept("AS") {
		switch {
		case p.accept("ASYNC"):
			st.mode = "async"
		case p.accept("STRICT_SYNC"):
			st.mode = "strict_sync"
		default:
			return nil, p.unexpected(p.peek(), "{ASYNC, STRICT_SYNC}")
		}
	}
	if err := p.expect("WITH", "CONFIG"); err != nil {
		return nil, err
	}
	st.config, err = p.configMap()
	return st, err
}

// recoverSnapshot: RECOVER SNAPSHOT literal ( WITH CONFIG configMap )? ( FORCE )?
// (MemgraphCypher.g4 720).
func (p *parser) recoverSnapshot() (*statement, error) {
	p.pos += 2
	path, err := p.literal()
	if err != nil {
		return nil, err
	}
	st := &statement{kind: stRecoverSnapshot, snapshot: path}
	if p.accept("WITH") {
		if err := p.expect("CONFIG"); err != nil {
			return nil, err
		}
		if st.config, err = p.configMap(); err != nil {
			return nil, err
		}
	}
	st.force = p.accept("FORCE")
	return st, nil
}

func (p *parser) addCoordinator() (*statement, error) {
	p.pos += 2
	id, err := p.literal()
	if err != nil {
		return nil, err
	}
	if err := p.expect("WITH", "CONFIG"); err != nil {
		return nil, err
	}
	cfg, err := p.configMap()
	return &statement{kind: stAddCoordinator, id: id, config: cfg}, err
}

func (p *parser) updateConfig() (*statement, error) {
	p.pos += 2
	if err := p.expect("FOR"); err != nil {
		return nil, err
	}
	st := &statement{}
	var err error
	switch {
	case p.accept("INSTANCE"):
		st.kind = stUpdateConfigInstance
		st.name, err = p.symbolicName()
	case p.accept("COORDINATOR"):
		st.kind = stUpdateConfigCoordinator
		st.id, err = p.literal()
	default:
		return nil, p.unexpected(p.peek(), "{INSTANCE, COORDINATOR}")
	}
	if err != nil {
		return nil, err
	}
	st.config, err = p.configMap()
	return st, err
}

func (p *parser) setCoordinatorSetting() (*statement, error) {
	if err := p.expect("SET", "COORDINATOR", "SETTING"); err != nil {
		return nil, err
	}
	name, err := p.literal()
	if err != nil {
		return nil, err
	}
	if err := p.expect("TO"); err != nil {
		return nil, err
	}
	value, err := p.literal()
	return &statement{kind: stSetCoordinatorSetting, settingName: name, settingValue: value}, err
}

// configMap: '{' ( literal ':' ( literal | parameter ) ( ',' … )* )? '}'.
func (p *parser) configMap() ([]configEntry, error) {
	if err := p.expect("{"); err != nil {
		return nil, err
	}
	var out []configEntry
	if p.accept("}") {
		return out, nil
	}
	for {
		k, err := p.literal()
		if err != nil {
			return nil, err
		}
		if err := p.expect(":"); err != nil {
			return nil, err
		}
		var v any
		if t := p.peek(); t.kind == tokParam {
			p.advance()
			v = paramRef(t.text)
		} else if v, err = p.literal(); err != nil {
			return nil, err
		}
		out = append(out, configEntry{key: k, value: v})
		if p.accept("}") {
			return out, nil
		}
		if err := p.expect(","); err != nil {
			return nil, err
		}
	}
}

// literal: string, number, boolean, NULL, list literal or map literal (values are literals).
func (p *parser) literal() (any, error) {
	t := p.peek()
	switch {
	case t.kind == tokString:
		p.advance()
		return t.text, nil
	case t.kind == tokInt:
		p.advance()
		return t.i, nil
	case t.kind == tokFloat:
		p.advance()
		return t.f, nil
	case isKeyword(t, "TRUE"), isKeyword(t, "FALSE"):
		p.advance()
		return strings.EqualFold(t.text, "TRUE"), nil
	case isKeyword(t, "NULL"):
		p.advance()
		return nil, nil
	case t.kind == tokPunct && t.text == "[":
		return p.listLiteral()
	case t.kind == tokPunct && t.text == "{":
		return p.mapLiteral()
	}
	return nil, p.unexpected(t, "a literal")
}

func (p *parser) listLiteral() (any, error) {
	p.advance()
	out := []any{}
	if p.accept("]") {
		return out, nil
	}
	for {
		v, err := p.literal()
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		if p.accept("]") {
			return out, nil
		}
		if err := p.expect(","); err != nil {
			return nil, err
		}
	}
}

func (p *parser) mapLiteral() (any, error) {
	p.advance()
	out := map[string]any{}
	if p.accept("}") {
		return out, nil
	}
	for {
		k, err := p.symbolicName()
		if err != nil {
			return nil, err
		}
		if err := p.expect(":"); err != nil {
			return nil, err
		}
		v, err := p.literal()
		if err != nil {
			return nil, err
		}
		out[k] = v
		if p.accept("}") {
			return out, nil
		}
		if err := p.expect(","); err != nil {
			return nil, err
		}
	}
}
