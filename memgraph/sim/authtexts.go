package sim

import "fmt"

// Memgraph 3.12's texts for auth queries (src/query/interpreter.cpp HandleAuthQuery 982–1830,
// src/glue/auth_handler.cpp, src/auth/auth.cpp, src/query/exceptions.hpp), verbatim.
const (
	// msgAuthOnReplica is forbid_on_replica's text with an Enterprise license (interpreter.cpp
	// 1045–1063).
	msgAuthOnReplica = "Query forbidden on the replica! Update on MAIN, as it is the only source of truth for " +
		"authentication data. MAIN will then replicate the update to connected REPLICAs"
	msgPasswordLiteral    = "Password should be a string literal or null."
	msgInvalidUserName    = "Invalid user name."
	msgShowPrivilegesMT   = "In a multi-tenant environment, SHOW PRIVILEGES query requires database specification. Use ON MAIN, ON CURRENT or ON DATABASE db_name."
	msgShowPrivilegesMain = "No user found for SHOW PRIVILEGES ON MAIN"
)

// msgUserModificationTx is UserModificationInMulticommandTxException (exceptions.hpp 148–157,
// 326–330).
var msgUserModificationTx = msgMulticommand("Managing users")

func msgUserExists(name string) string {
	return fmt.Sprintf("User or role with name '%s' already exists. Use the SHOW USERS or SHOW ROLES query to list all users "+
		"and roles. In addition you can rerun the current query with IF NOT EXISTS.", name)
}

func msgRoleExists(name string) string {
	return fmt.Sprintf("Role or user with name '%s' already exists. Use the SHOW ROLES or SHOW USERS query to list all roles "+
		"and users. In addition you can rerun the current query with IF NOT EXISTS.", name)
}

func msgDropNoUser(name string) string {
	return fmt.Sprintf("User with username '%s' doesn't exist. A new user can be created via the CREATE USER query.", name)
}

func msgNoUser(name string) string { return fmt.Sprintf("User '%s' doesn't exist.", name) }
func msgNoRole(name string) string { return fmt.Sprintf("Role '%s' doesn't exist.", name) }
func msgNoUserOrRole(name string) string {
	return fmt.Sprintf("User or role '%s' doesn't exist.", name)
}
func msgNoUserNorRole(name string) string {
	return fmt.Sprintf("No user nor role '%s' found.", name)
}

func msgAmbiguous(name string) string {
	return fmt.Sprintf("Ambiguous: '%s' is both a user and a role. Specify USER or ROLE.", name)
}

func msgSetMainDatabase(db, name string) string {
	return fmt.Sprintf("Couldn't set default database '%s' for '%s'!", db, name)
}

func msgRoleAssigned(name string) string {
	return fmt.Sprintf("Cannot delete role '%s' as it is assigned to one or more users. Drop or reassign the users first.", name)
}

func msgDatabasePrivilegesMissing(typ, name string) string {
	switch typ {
	case "USER":
		return fmt.Sprintf("Missing user '%s'.", name)
	case "ROLE":
		return fmt.Sprintf("Missing one of roles: %s.", name)
	}
	return fmt.Sprintf("Missing user '%s' or one of role: %s.", name, name)
}

// CREATE USER's and CREATE ROLE's notifications (interpreter.cpp 1076–1153, 1222–1245).
func noteUserCreated(name string, first, builtinRolesCreated, withRoles bool) map[string]any {
	switch {
	case builtinRolesCreated:
		return info("CreateUser", fmt.Sprintf("User '%s' created. Built-in roles created: 'admin', 'readwrite', 'readonly'. "+
			"User '%s' assigned built-in role 'admin', with full access to all data and privileges.", name, name))
	case withRoles:
		return info("CreateUser", fmt.Sprintf("User '%s' created. Assigned built-in role 'admin', with full access to all data "+
			"and privileges.", name))
	case first:
		return info("CreateUser", fmt.Sprintf("User '%s' created with full access to all data and privileges, and no roles assigned.", name))
	}
	return info("CreateUser", fmt.Sprintf("User '%s' created. No roles or privileges assigned.", name))
}

func noteUserExists(name string) map[string]any {
	n := info("CreateUser", fmt.Sprintf("User '%s' already exists.", name))
	n["severity"] = "WARNING"
	return n
}

func noteRoleCreated(name string) map[string]any {
	return info("CreateRole", fmt.Sprintf("Role '%s' created.", name))
}

func noteRoleExists(name string) map[string]any {
	n := info("CreateRole", fmt.Sprintf("Role '%s' already exists.", name))
	n["severity"] = "WARNING"
	return n
}
