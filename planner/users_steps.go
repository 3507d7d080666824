package planner

import (
	"context"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
)

// The steps of a MemgraphUser's pass and what performing one takes of the shell (UserEffects):
// each step performs itself — one Memgraph query, or reaching the cluster — and decides nothing.

// UserStep is what a MemgraphUser's pass does next: reach the cluster, read a coordinator's
// table to find the MAIN, read or write on the MAIN, or end (UserDone, which performs nothing).
type UserStep interface {
	Perform(ctx context.Context, e UserEffects) UserResult
}

// UserEffects is what the shell provides a MemgraphUser's steps: the cluster's Memgraph reached
// with what its user-access Secret carries, and the passwords, which only the shell holds.
type UserEffects interface {
	// Reach makes the connectors of the cluster from its user-access Secret (spec.tls's CA,
	// spec.auth's user); the problem says why the cluster cannot be reached as its Secrets say.
	Reach() (problem string)
	// ShowInstances is SHOW INSTANCES on the coordinator at address, within 1/(share+1) of the
	// time left when share > 0 (a coordinator that does not answer leaves time for the others).
	ShowInstances(ctx context.Context, coordinator string, share int) ([]memgraph.Instance, error)
	// Main is a client of the data instance at address with spec.auth's credentials, which
	// manages users; the error says why there is none.
	Main(address string) (memgraph.UserClient, error)
	// PasswordHash is the hash Memgraph takes ("bcrypt:" and the hash) of the user's password,
	// or of spec.auth's for the hook's own user; the error says why it cannot be made.
	PasswordHash(hookUser bool) (memgraph.Password, error)
}

// UserResult is what performing one step gave, in the pass's record in the order performed.
type UserResult struct {
	Instances  []memgraph.Instance     // userShowInstances
	Users      []string                // UserReadUsers
	Roles      []memgraph.RoleInfo     // UserReadRoles
	RolesOf    []string                // UserReadRolesOf
	Privileges []memgraph.PrivilegeRow // UserReadPrivileges
	Databases  memgraph.DatabaseAccess // UserReadDatabases
	// Err is why the read or the statement failed (Memgraph's error for a query).
	Err error
	// Problem says why the step could not be made at all: the cluster cannot be reached as its
	// Secrets say (userReach), or the password could not be hashed (UserWrite); nothing was
	// sent.
	Problem string
	// Expired: the pass's budget had run out by the end of a coordinator's read.
	Expired bool
}

// userReach reaches the cluster with what its user-access Secret carries, before its
// coordinators are asked for the MAIN.
type userReach struct{}

func (userReach) Perform(_ context.Context, e UserEffects) UserResult {
	return UserResult{Problem: e.Reach()}
}

// userShowInstances is SHOW INSTANCES on a coordinator, one read of the search for the MAIN
// (findMain.go), with its share of the time left.
type userShowInstances struct {
	from  string
	share int
}

func (r userShowInstances) Perform(ctx context.Context, e UserEffects) UserResult {
	rows, err := e.ShowInstances(ctx, r.from, r.share)
	return UserResult{Instances: rows, Err: err, Expired: ctx.Err() != nil}
}

// UserReadKind names what a UserRead asks for.
type UserReadKind int

const (
	// UserReadUsers is SHOW USERS.
	UserReadUsers UserReadKind = iota + 1
	// UserReadRoles is SHOW ROLES.
	UserReadRoles
	// UserReadRolesOf is SHOW ROLES FOR USER of Target.
	UserReadRolesOf
	// UserReadPrivileges is SHOW PRIVILEGES FOR Target ON DATABASE Database.
	UserReadPrivileges
	// UserReadDatabases is SHOW DATABASE PRIVILEGES FOR Target.
	UserReadDatabases
)

// UserRead reads one thing on the MAIN.
type UserRead struct {
	What     UserReadKind
	Target   memgraph.AuthTarget
	Database string
	main     string // the MAIN's Bolt address
}

func (r UserRead) Perform(ctx context.Context, e UserEffects) UserResult {
	var got UserResult
	c, err := e.Main(r.main)
	if err != nil {
		got.Err = err
		return got
	}
	switch r.What {
	case UserReadUsers:
		got.Users, got.Err = c.ShowUsers(ctx)
	case UserReadRoles:
		got.Roles, got.Err = c.ShowRoles(ctx)
	case UserReadRolesOf:
		got.RolesOf, got.Err = c.ShowRolesForUser(ctx, r.Target.Name)
	case UserReadPrivileges:
		got.Privileges, got.Err = c.ShowPrivileges(ctx, r.Target, r.Database)
	case UserReadDatabases:
		got.Databases, got.Err = c.ShowDatabasePrivileges(ctx, r.Target)
	}
	return got
}

// UserWrite sends one statement on the MAIN; one that carries a password
// (AuthCommand.NeedsPassword) gets a hash of it made now, by the shell.
type UserWrite struct {
	Statement AuthCommand
	main      string // the MAIN's Bolt address
}

func (w UserWrite) Perform(ctx context.Context, e UserEffects) UserResult {
	var got UserResult
	s := w.Statement.AuthStatement
	if w.Statement.NeedsPassword() {
		var err error
		if s.Password, err = e.PasswordHash(w.Statement.HookUser); err != nil {
			got.Problem = err.Error()
			return got
		}
	}
	c, err := e.Main(w.main)
	if err != nil {
		got.Err = err
		return got
	}
	got.Err = c.RunAuth(ctx, s)
	return got
}

// UserDone ends the pass: its verdict, and the status it leaves but for the Ready condition,
// which the shell stamps with the time (keeping the prior lastTransitionTime while its status
// stays).
type UserDone struct {
	Verdict UserVerdict
	// Status carries what was read of the user and the records carried forward
	// (appliedPasswordVersion, mainDatabase); its Conditions are left to the shell.
	Status v1alpha1.MemgraphUserStatus
	// Plan is a dry run's statements, passwords hidden.
	Plan []string
	// Finalized: the finalize hook may let the MemgraphUser go.
	Finalized bool
	// Sent is how many statements Memgraph took; Events the pass's lines for the hook's log.
	Sent   int
	Events []Event
}

// Perform performs nothing: the pass has ended.
func (UserDone) Perform(context.Context, UserEffects) UserResult { return UserResult{} }
