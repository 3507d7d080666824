package v1alpha1

import (
	"fmt"
	"regexp"
	"slices"
)

// The Go side of the MemgraphUser CRD's CEL rules and of spec.roles' in the MemgraphCluster,
// each message word for word the rule's in user_types.go (user_validate_test.go and crd_test.go
// check the generated CRDs against them).
const (
	MsgUserObjectName       = "metadata.name must be at most 128 characters: it is the Memgraph user's name unless spec.username is set, and names the generated Secret <name>-credentials; pick a shorter name"
	MsgUsernameImmutable    = "spec.username cannot change: it names the Memgraph user; delete this MemgraphUser (which drops the user, with deletionPolicy Delete) and create another"
	MsgUserMainDatabase     = "mainDatabase must be one of databases (any database when databases lists *); without databases the user may use the default database memgraph alone, so mainDatabase can only be memgraph"
	MsgUserCluster          = "cluster must name a MemgraphCluster in the user's namespace: lower-case letters, digits and '-', starting with a letter"
	MsgUserClusterImmutable = "spec.cluster cannot change: a MemgraphUser belongs to one cluster; create another MemgraphUser for another cluster"
	MsgUsername             = "username must be a Memgraph user name: 1 to 128 lower-case letters, digits and '_', '.', '@', '+', '-', not starting with one of '.@+-'"
	MsgUserRoles            = "roles must list Memgraph role names: 1 to 128 lower-case letters, digits and '_', '.', '@', '+', '-', not starting with one of '.@+-'"
	MsgPrivilegesAll        = "privileges must list ALL alone or name privileges without ALL: ALL is every privilege"
	MsgDatabases            = "databases must list database names (letters, digits, '_', '.', '-', at most 128 characters) or * for every database"
	MsgMainDatabaseName     = "mainDatabase must be a database name: letters, digits, '_', '.', '-'"
	MsgRoleBuiltin          = "roles[].name must not be one of Memgraph 3.12's built-in roles (admin, readwrite, readonly): a MemgraphUser names those as they are; declare a role of another name for other privileges"
	MsgRoleName             = "roles[].name must be a Memgraph role name: 1 to 128 lower-case letters, digits and '_', '.', '@', '+', '-', not starting with one of '.@+-'"
	MsgUnknownPrivilege     = "privileges must name Memgraph 3.12's privileges, as GRANT does (ALL, CREATE, DELETE, MATCH, ...)"
)

// Privileges are the values of MemgraphPrivilege, its CRD enum: ALL and every privilege GRANT
// names in Memgraph 3.12.
var Privileges = []MemgraphPrivilege{PrivilegeAll, "CREATE", "DELETE", "MATCH", "MERGE", "SET", "REMOVE", "INDEX", "STATS",
	"AUTH", "CONSTRAINT", "DUMP", "REPLICATION", "READ_FILE", "DURABILITY", "FREE_MEMORY", "TRIGGER", "CONFIG", "STREAM",
	"MODULE_READ", "MODULE_WRITE", "WEBSOCKET", "TRANSACTION_MANAGEMENT", "STORAGE_MODE", "MULTI_DATABASE_EDIT",
	"MULTI_DATABASE_USE", "COORDINATOR", "IMPERSONATE_USER", "PROFILE_RESTRICTION", "PARALLEL_EXECUTION",
	"SERVER_SIDE_PARAMETERS", "RELOAD_TLS"}

// Patterns shared, character for character, with the CEL rules.
const (
	authNamePattern     = `^[a-z0-9_][a-z0-9_.@+-]*$`
	databaseNamePattern = `^[A-Za-z0-9_][A-Za-z0-9_.-]*$`
	maxAuthNameLength   = 128
)

var (
	authNameRE     = regexp.MustCompile(authNamePattern)
	databaseNameRE = regexp.MustCompile(databaseNamePattern)
)

// BuiltinRoles are Memgraph 3.12's built-in roles, which spec.roles may not declare.
var BuiltinRoles = []string{"admin", "readwrite", "readonly"}

func validAuthName(s string) bool { return len(s) <= maxAuthNameLength && authNameRE.MatchString(s) }

func validDatabases(dbs []string) bool {
	return !slices.ContainsFunc(dbs, func(d string) bool {
		return len(d) > maxAuthNameLength || d != "*" && !databaseNameRE.MatchString(d)
	})
}

func validPrivileges(ps []MemgraphPrivilege) bool {
	return !slices.Contains(ps, PrivilegeAll) || len(ps) == 1
}

// validateRoles is the twin of spec.roles' rules.
func validateRoles(vs *violations, s *MemgraphClusterSpec) {
	for i, r := range s.Roles {
		path := fmt.Sprintf("spec.roles[%d]", i)
		vs.add(!authNameRE.MatchString(r.Name), path+".name", MsgRoleName)
		vs.add(slices.Contains(BuiltinRoles, r.Name), path, MsgRoleBuiltin)
		vs.add(!validPrivileges(r.Privileges), path+".privileges", MsgPrivilegesAll)
		vs.add(!validDatabases(r.Databases), path+".databases", MsgDatabases)
	}
}

// UserViolations are the CEL rules a MemgraphUser breaks (but the transition rules, which need
// the stored object), for a user that may have skipped admission.
func UserViolations(u *MemgraphUser) []Violation {
	var vs violations
	s := &u.Spec
	vs.add(len(u.Name) > maxAuthNameLength, "metadata.name", MsgUserObjectName)
	vs.add(len(s.Cluster) > maxClusterNameLength || !clusterNameRE.MatchString(s.Cluster), "spec.cluster", MsgUserCluster)
	vs.add(s.Username != "" && !validAuthName(s.Username), "spec.username", MsgUsername)
	vs.add(s.PasswordSecret != nil && !clusterDomainRE.MatchString(s.PasswordSecret.Name), "spec.passwordSecret.name", MsgSecretReference)
	vs.add(slices.ContainsFunc(s.Roles, func(r string) bool { return !validAuthName(r) }), "spec.roles", MsgUserRoles)
	vs.add(!validPrivileges(s.Privileges), "spec.privileges", MsgPrivilegesAll)
	vs.add(slices.ContainsFunc(s.Privileges, func(p MemgraphPrivilege) bool { return !slices.Contains(Privileges, p) }),
		"spec.privileges", MsgUnknownPrivilege)
	vs.add(!validDatabases(s.Databases), "spec.databases", MsgDatabases)
	vs.add(s.MainDatabase != "" && !databaseNameRE.MatchString(s.MainDatabase), "spec.mainDatabase", MsgMainDatabaseName)
	vs.add(s.MainDatabase != "" && !mainDatabaseDeclared(s), "spec", MsgUserMainDatabase)
	return vs
}

func mainDatabaseDeclared(s *MemgraphUserSpec) bool {
	if s.Databases == nil {
		return s.MainDatabase == DefaultDatabase
	}
	return slices.Contains(s.Databases, "*") || slices.Contains(s.Databases, s.MainDatabase)
}

// Username is the Memgraph user a MemgraphUser declares: spec.username, else its own name.
func (u *MemgraphUser) Username() string {
	if u.Spec.Username != "" {
		return u.Spec.Username
	}
	return u.Name
}

// PasswordSecretName is the Secret with the user's password: spec.passwordSecret's, else the
// generated one.
func (u *MemgraphUser) PasswordSecretName() string {
	if u.Spec.PasswordSecret != nil {
		return u.Spec.PasswordSecret.Name
	}
	return UserSecretName(u.Name)
}
