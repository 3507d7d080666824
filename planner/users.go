package planner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
)

// A MemgraphUser's pass: what must hold before anything is read (userGate), what it declares
// (UserSpec, RoleSpec), the statements that bring the MAIN's users and roles to it (planUser,
// users_plan.go), and its status (users_status.go); NextUser (users_next.go) runs it as a step
// machine through its stages (users_pass.go). Memgraph keeps users on the MAIN and
// replicates them to its replicas itself, so every read and statement goes to the MAIN.

// The reasons of a MemgraphUser's Ready condition.
const (
	ReasonUserInForce          = "InForce"
	ReasonUserClusterNotFound  = ReasonClusterNotFound
	ReasonUserClusterInvalid   = "ClusterSpecRefused"
	ReasonClusterWithoutAuth   = "ClusterWithoutAuth"
	ReasonUserClusterHibernate = ReasonClusterHibernate
	ReasonUserSpecInvalid      = "SpecInvalid"
	ReasonReservedUser         = "ReservedUser"
	ReasonUnknownRole          = "UnknownRole"
	ReasonPasswordSecret       = "PasswordSecretProblem"
	ReasonCredentialsPending   = "CredentialsPending"
	ReasonHookCredentials      = "HookCredentialsProblem"
	ReasonAccessSecretPending  = "AccessSecretPending"
	ReasonUserNoMain           = ReasonNoMain
	ReasonMemgraphUnreachable  = "MemgraphUnreachable"
	ReasonMemgraphRefused      = "MemgraphRefused"
	ReasonUserRetained         = "Retained"
	ReasonUserDropped          = "Dropped"
)

// UserSpec is what a MemgraphUser declares, in the planner's terms: the default database and
// main database filled in, lists sorted.
type UserSpec struct {
	Username     string
	Roles        []string
	Privileges   PrivilegeSet
	Databases    []string // memgraph.AllDatabases alone for every database
	MainDatabase string
}

// RoleSpec is a role a MemgraphCluster declares.
type RoleSpec struct {
	Name       string
	Privileges PrivilegeSet
	Databases  []string
}

// PrivilegeSet is declared privileges: every one (ALL), or these, in memgraph.Privileges' order.
type PrivilegeSet struct {
	All   bool
	Names []string
}

// names is every privilege the set holds.
func (p PrivilegeSet) names() []string {
	if p.All {
		return memgraph.Privileges
	}
	return p.Names
}

// declaredUser reads a MemgraphUser's spec.
func declaredUser(u *v1alpha1.MemgraphUser) UserSpec {
	s := UserSpec{Username: u.Username(), Roles: sortedUnique(u.Spec.Roles), Privileges: declaredPrivileges(u.Spec.Privileges),
		Databases: declaredDatabases(u.Spec.Databases), MainDatabase: u.Spec.MainDatabase}
	if s.MainDatabase == "" {
		s.MainDatabase = memgraph.DefaultDatabase
	}
	return s
}

// declaredRole reads one of spec.roles.
func declaredRole(r v1alpha1.ClusterRole) RoleSpec {
	return RoleSpec{Name: r.Name, Privileges: declaredPrivileges(r.Privileges), Databases: declaredDatabases(r.Databases)}
}

func declaredPrivileges(ps []v1alpha1.MemgraphPrivilege) PrivilegeSet {
	var out PrivilegeSet
	for _, p := range ps {
		if p == v1alpha1.PrivilegeAll {
			return PrivilegeSet{All: true}
		}
		out.Names = append(out.Names, string(p))
	}
	out.Names = inPrivilegeOrder(out.Names)
	return out
}

// declaredDatabases is the default database when none is declared, "*" alone when it is.
func declaredDatabases(dbs []string) []string {
	switch {
	case len(dbs) == 0:
		return []string{memgraph.DefaultDatabase}
	case slices.Contains(dbs, memgraph.AllDatabases):
		return []string{memgraph.AllDatabases}
	}
	return sortedUnique(dbs)
}

func allDatabases(dbs []string) bool { return slices.Contains(dbs, memgraph.AllDatabases) }

func sortedUnique(xs []string) []string {
	out := slices.Clone(xs)
	slices.Sort(out)
	return slices.Compact(out)
}

// inPrivilegeOrder sorts privilege names as Memgraph lists them, without duplicates.
func inPrivilegeOrder(names []string) []string {
	var out []string
	for _, p := range memgraph.Privileges {
		if slices.Contains(names, p) {
			out = append(out, p)
		}
	}
	return out
}

// userGate is what a MemgraphUser's pass needs before it reads anything: its cluster (found,
// admitted, awake, with spec.auth), the Secrets (spec.auth's, the password's), a spec admission
// would accept, a user other than the hook's own, and the roles it names declared or built in.
type userGate struct {
	Cluster        string
	ClusterFound   bool
	ClusterProblem string // why the cluster's spec cannot be used
	ClusterHasAuth bool
	Hibernated     bool
	// AccessPending is why the cluster's user-access Secret, its hook's copy of what reaching
	// the MAIN takes, cannot be used yet: it does not exist, or follows an older generation.
	AccessPending   string
	SpecProblems    []string // rules of the MemgraphUser's CRD it breaks
	HookCredentials string   // what is wrong with spec.auth's Secret
	HookUser        string   // spec.auth's username
	Username        string
	PasswordProblem string // what is wrong with the password Secret
	Generating      bool   // the generated Secret is not there yet
	UndeclaredRoles []string
}

// Wait is reused for a MemgraphUser: why nothing is read or sent, and whether the declaration
// itself is wrong (Failed) rather than something to wait for (Pending).
type userWait struct {
	Wait
	Failed bool
}

// userWaits decides whether a MemgraphUser's pass may read the cluster; zero when it may.
func userWaits(g userGate) userWait {
	cluster := "MemgraphCluster " + g.Cluster
	switch {
	case len(g.SpecProblems) > 0:
		return userWait{Wait{ReasonUserSpecInvalid, "the MemgraphUser breaks rules its CRD enforces: " + strings.Join(g.SpecProblems, "; ") +
			"; nothing was sent to Memgraph"}, true}
	case !g.ClusterFound:
		return userWait{Wait: Wait{ReasonUserClusterNotFound, cluster + " does not exist in the user's namespace; the user is created once it does"}}
	case g.ClusterProblem != "":
		return userWait{Wait{ReasonUserClusterInvalid, g.ClusterProblem}, true}
	case !g.ClusterHasAuth:
		return userWait{Wait{ReasonClusterWithoutAuth, cluster + " has no spec.auth: the hook manages users as the Memgraph user " +
			"spec.auth names (with the AUTH privilege); set spec.auth.secretName on the cluster"}, true}
	case g.AccessPending != "":
		return userWait{Wait: Wait{ReasonAccessSecretPending, g.AccessPending}}
	case strings.EqualFold(g.Username, g.HookUser):
		return userWait{Wait{ReasonReservedUser, fmt.Sprintf("user %s is %s's spec.auth user, the hook's own: it cannot be declared, "+
			"changed or dropped through a MemgraphUser", g.Username, cluster)}, true}
	case len(g.UndeclaredRoles) > 0:
		return userWait{Wait{ReasonUnknownRole, fmt.Sprintf("role %s is neither declared in %s's spec.roles nor one of Memgraph's "+
			"built-in roles (admin, readwrite, readonly); declare it, or remove it from spec.roles; nothing was sent to Memgraph",
			strings.Join(g.UndeclaredRoles, ", "), cluster)}, true}
	case g.Hibernated:
		return userWait{Wait: Wait{ReasonUserClusterHibernate, cluster + " hibernates (spec.hibernate): no Memgraph runs to hold the user; it is applied once the cluster is awake"}}
	case g.HookCredentials != "":
		return userWait{Wait: Wait{ReasonHookCredentials, g.HookCredentials}}
	case g.PasswordProblem != "":
		return userWait{Wait: Wait{ReasonPasswordSecret, g.PasswordProblem}}
	case g.Generating:
		return userWait{Wait: Wait{ReasonCredentialsPending, "the generated password Secret is being created; the user is created with " +
			"its password once the Secret exists"}}
	}
	return userWait{}
}

// undeclaredRoles are the roles a user names that its cluster does not declare and that are not
// Memgraph's built-in roles: nothing is read or sent for such a user.
func undeclaredRoles(spec UserSpec, declared map[string]RoleSpec) []string {
	var out []string
	for _, r := range spec.Roles {
		if _, ok := declared[r]; !ok && !slices.Contains(memgraph.BuiltinRoles, r) {
			out = append(out, r)
		}
	}
	return out
}

// missingBuiltinRoles are the built-in roles a user names that SHOW ROLES does not list: an
// instance has them only when Memgraph created them with its first user, which it does when
// there is no role yet (auth.cpp 1092–1100) — as on a MAIN without users or roles, whose first
// user this pass creates (planUser).
func missingBuiltinRoles(spec UserSpec, declared map[string]RoleSpec, users []string, roles []memgraph.RoleInfo) []string {
	if len(users) == 0 && len(roles) == 0 {
		return nil
	}
	var out []string
	for _, r := range spec.Roles {
		if _, ok := declared[r]; ok {
			continue
		}
		if !slices.ContainsFunc(roles, func(i memgraph.RoleInfo) bool { return i.Name == r }) {
			out = append(out, r)
		}
	}
	return out
}

// roleReadDatabase is the database a role's privileges are read on: SHOW PRIVILEGES shows a
// role's privileges on a database it may use only.
func roleReadDatabase(r RoleSpec) string {
	if allDatabases(r.Databases) {
		return memgraph.DefaultDatabase
	}
	return r.Databases[0]
}
