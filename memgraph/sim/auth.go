package sim

// Auth is the user a data instance starts with, as an operator creates the first user: every
// privilege but Denied. Its String hides the credentials, so a DataSpec printed in an error or a
// log never shows them.
type Auth struct {
	Username string
	Password string
	// Denied are the privileges the user is denied (Privilege*); it has every other one.
	Denied []Privilege
}

// Privilege is one of Memgraph's privileges, as GRANT names it.
type Privilege string

// Some privileges of the queries the simulator's data instances answer
// (src/query/frontend/semantic/required_privileges.cpp).
const (
	// PrivilegeReplication: SHOW REPLICAS, SHOW REPLICATION ROLE and the manual replication
	// queries (ReplicationQuery, ReplicationInfoQuery; lines 121–123).
	PrivilegeReplication Privilege = "REPLICATION"
	// PrivilegeDurability: CREATE SNAPSHOT, RECOVER SNAPSHOT, SHOW SNAPSHOTS (129–135).
	PrivilegeDurability Privilege = "DURABILITY"
	// PrivilegeReloadTLS: RELOAD BOLT_SERVER TLS and RELOAD INTRA_CLUSTER TLS (196).
	PrivilegeReloadTLS Privilege = "RELOAD_TLS"
	// PrivilegeMultiDatabaseUse: SHOW DATABASES (181–183); PrivilegeMultiDatabaseEdit: CREATE
	// DATABASE (155–159).
	PrivilegeMultiDatabaseUse  Privilege = "MULTI_DATABASE_USE"
	PrivilegeMultiDatabaseEdit Privilege = "MULTI_DATABASE_EDIT"
	// PrivilegeAuth: every auth query but SHOW CURRENT USER (44–52).
	PrivilegeAuth Privilege = "AUTH"
)

func (a *Auth) String() string { return "sim.Auth{<redacted>}" }

// GoString hides the fields from %#v as well.
func (a *Auth) GoString() string { return a.String() }

// Authenticate checks a Bolt client's credentials (the listener calls it for HELLO in Bolt 4
// and LOGON in Bolt 5; bolt.Authenticator). Coordinators ignore auth ("Ignoring auth on
// coordinators", Memgraph v3.12.0 src/communication/bolt/v1/states/init.hpp 119–124). A data
// instance takes the "basic" and "none" schemes only (init.hpp 145–159); once it has a user,
// only a user's name (in any case) with its password (any, for a user without one: auth.cpp
// 550–570, models.cpp 1237–1239), else any (glue/SessionHL.cpp 286–316).
func (h *handler) Authenticate(scheme, principal, credentials string) bool {
	h.w.mu.Lock()
	defer h.w.mu.Unlock()
	if h.in.coord {
		return true
	}
	if scheme != "basic" && scheme != "none" {
		return false
	}
	data := h.in.auth
	if !data.accessControlled() {
		return true
	}
	u := data.user(principal)
	return u != nil && u.checkPassword(credentials)
}

// requiredPrivileges are the privileges a statement needs (required_privileges.cpp): the
// replication, snapshot, reload and database queries theirs, an auth query AUTH (SHOW CURRENT
// USER none), and a Cypher query one per clause it has (MATCH, CREATE,
// MERGE, DELETE, SET, REMOVE).
func requiredPrivileges(st *statement) privSet {
	switch st.kind {
	case stShowReplicas, stShowReplicationRole, stRegisterReplica, stDropReplica, stSetReplicationRole:
		return privilegeBit(PrivilegeReplication)
	case stCreateSnapshot, stShowSnapshots, stRecoverSnapshot:
		return privilegeBit(PrivilegeDurability)
	case stReloadBoltTLS, stReloadClusterTLS:
		return privilegeBit(PrivilegeReloadTLS)
	case stShowDatabases:
		return privilegeBit(PrivilegeMultiDatabaseUse)
	case stCreateDatabase:
		return privilegeBit(PrivilegeMultiDatabaseEdit)
	case stAuth:
		if st.auth.action == aShowCurrentUser {
			return 0
		}
		return privilegeBit(PrivilegeAuth)
	case stOther:
		return st.clauses
	}
	return 0
}

// unauthorized is Interpreter::CheckAuthorized's refusal, after the query was prepared
// (glue/SessionHL.cpp 450–453), of a query in database db on a data instance that has users, by
// a session whose user lacks a privilege it needs there, may not use db, no longer exists, or
// logged in before there were users (QueryUserOrRole::IsAuthorized, glue/query_user.cpp 19–43);
// "" when it may run.
func unauthorized(in *instance, st *statement, user, db string) string {
	need := requiredPrivileges(st)
	data := in.auth
	if in.coord || need == 0 || !data.accessControlled() {
		return ""
	}
	if u := data.user(user); u != nil && data.authorized(u, need, db) {
		return ""
	}
	return msgNotAuthorized(db)
}

// msgNotAuthorized is CheckAuthorized's text (src/query/interpreter.cpp 10400–10419). Prepare
// always names a database by then — the query's own, else the session's (10365–10372) — so it is
// the variant that names it.
func msgNotAuthorized(db string) string {
	return `You are not authorized to execute this query on database "` + db + `"! Please contact your database ` +
		"administrator. This issue comes from the user having not enough role-based access privileges to execute this " +
		"query. If you want this issue to be resolved, ask your database administrator to grant you a specific " +
		"privilege for query execution."
}

// replicateAuth is the MAIN's system replication of its users and roles (UpdateAuthDataRpc,
// DropAuthDataRpc: src/auth/auth.cpp 123–190): every replica it reaches holds them at once. One
// it does not reach gets them whole when it next does (systemRecover).
func (w *World) replicateAuth(main *instance) {
	for _, c := range w.dataClusters() {
		if w.mainOf(c) != main {
			continue
		}
		for _, e := range c.data {
			if in := w.dataInstance(e); in != nil && in != main {
				w.systemRecover(main, in)
			}
		}
	}
}

// systemRecover gives a replica its MAIN's users and roles (SystemRecoveryRpc,
// replication_handler.hpp 96–135), when it runs, reads the MAIN's messages and accepts its
// connection: the MAIN is their only source of truth, so the replica's own are replaced.
func (w *World) systemRecover(main, in *instance) {
	if in.alive && !w.versionBlocked(main, in) && peerRefusal(main, in) == "" {
		in.auth = main.auth
	}
}
