package sim

import "slices"

// Auth is a data instance's one user (Memgraph's access control with a single user). Its
// String hides the credentials, so a DataSpec printed in an error or a log never shows them.
type Auth struct {
	Username string
	Password string
	// Denied are the privileges the user lacks (Privilege*); it has every other one.
	Denied []Privilege
}

// Privilege is one of Memgraph's privileges, as GRANT names it.
type Privilege string

// The privileges of the queries the simulator's data instances answer
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
)

func (a *Auth) String() string { return "sim.Auth{<redacted>}" }

// GoString hides the fields from %#v as well.
func (a *Auth) GoString() string { return a.String() }

// Authenticate checks a Bolt client's credentials (the listener calls it for HELLO in Bolt 4
// and LOGON in Bolt 5; bolt.Authenticator). Coordinators ignore auth ("Ignoring auth on
// coordinators", Memgraph v3.12.0 src/communication/bolt/v1/states/init.hpp 119–124). A data
// instance takes the "basic" and "none" schemes only (init.hpp 145–159) and, with a user
// (DataSpec.Auth), exactly its credentials; without one, any (glue/SessionHL.cpp 286–316).
func (h *handler) Authenticate(scheme, principal, credentials string) bool {
	h.w.mu.Lock()
	defer h.w.mu.Unlock()
	if h.in.coord {
		return true
	}
	if scheme != "basic" && scheme != "none" {
		return false
	}
	a := h.in.dspec.Auth
	return a == nil || principal == a.Username && credentials == a.Password
}

// requiredPrivilege is the privilege a query of kind needs, false for one the simulator asks
// none for (writes and reads are not modelled).
func requiredPrivilege(kind stmtKind) (Privilege, bool) {
	switch kind {
	case stShowReplicas, stShowReplicationRole, stRegisterReplica, stDropReplica, stSetReplicationRole:
		return PrivilegeReplication, true
	case stCreateSnapshot, stShowSnapshots, stRecoverSnapshot:
		return PrivilegeDurability, true
	case stReloadBoltTLS, stReloadClusterTLS:
		return PrivilegeReloadTLS, true
	case stShowDatabases:
		return PrivilegeMultiDatabaseUse, true
	case stCreateDatabase:
		return PrivilegeMultiDatabaseEdit, true
	}
	return "", false
}

// unauthorized is Interpreter::CheckAuthorized's refusal, after the query was prepared
// (glue/SessionHL.cpp 450–453), of a query in database db on a data instance whose user lacks
// the privilege it needs; "" when the user has it or the instance has no users.
func unauthorized(in *instance, kind stmtKind, db string) string {
	p, needed := requiredPrivilege(kind)
	if in.coord || in.dspec.Auth == nil || !needed || !slices.Contains(in.dspec.Auth.Denied, p) {
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
