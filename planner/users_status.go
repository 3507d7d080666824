package planner

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
)

// How often a MemgraphUser's pass comes back on its own: soon while it waits for something to
// appear, while its cluster changes or after a statement was refused; the CompositeController's
// resyncPeriodSeconds otherwise, which is what puts a privilege changed by hand back.
const (
	UserPendingResync = 10 * time.Second
	UserFailedResync  = 60 * time.Second
)

// InForce is what the MAIN shows of the user, for the status: its roles, the privileges
// Memgraph grants it (its own and its roles') on its main database, and the databases it may use.
type InForce struct {
	Roles      []string
	Privileges []string
	Databases  []string
}

// userInForce reads InForce from what the MAIN shows of the user.
func userInForce(st UserState) InForce {
	var privileges []string
	for _, r := range st.Privileges {
		if r.System() && r.Effective == memgraph.EffectiveGrant {
			privileges = append(privileges, r.Privilege)
		}
	}
	dbs := []string{memgraph.AllDatabases}
	if !st.Databases.All {
		dbs = slices.DeleteFunc(slices.Clone(st.Databases.Granted), func(d string) bool { return slices.Contains(st.Databases.Denied, d) })
	}
	return InForce{Roles: sortedUnique(st.Roles), Privileges: inPrivilegeOrder(privileges), Databases: dbs}
}

// UserVerdict is a pass's outcome for the status: phase, the Ready condition's reason and
// message, and when to come back.
type UserVerdict struct {
	Phase   v1alpha1.UserPhase
	Reason  string
	Message string
	Resync  time.Duration
}

// Ready is the Ready condition's status.
func (v UserVerdict) Ready() bool { return v.Phase == v1alpha1.UserReady }

// verdictOfWait is the verdict of a pass that read nothing.
func verdictOfWait(w userWait) UserVerdict {
	if w.Failed {
		return UserVerdict{Phase: v1alpha1.UserFailed, Reason: w.Reason, Message: w.Message, Resync: UserFailedResync}
	}
	return UserVerdict{Phase: v1alpha1.UserPending, Reason: w.Reason, Message: w.Message, Resync: UserPendingResync}
}

// verdictOfError is the verdict of a pass whose read or statement failed: a MAIN that did not
// answer (or none) is waited for; a login the MAIN refused waits for spec.auth's Secret to be
// fixed; any other refusal fails the user with Memgraph's own words and the statement (its
// password hidden) that got it.
func verdictOfError(err error) UserVerdict {
	var e *memgraph.Error
	var noMain NoMainError
	var creds HookCredentialsError
	switch kind := memgraph.KindOf(err); {
	case errors.As(err, &creds):
		return UserVerdict{Phase: v1alpha1.UserPending, Reason: ReasonHookCredentials, Message: creds.Problem, Resync: UserPendingResync}
	case errors.As(err, &noMain):
		return UserVerdict{Phase: v1alpha1.UserPending, Reason: ReasonUserNoMain, Message: err.Error(), Resync: UserPendingResync}
	case kind == memgraph.KindUnreachable || kind == memgraph.KindTimeout || kind == memgraph.KindClosed:
		return UserVerdict{Phase: v1alpha1.UserPending, Reason: ReasonMemgraphUnreachable, Message: err.Error(), Resync: UserPendingResync}
	case kind == memgraph.KindUnauthenticated:
		return UserVerdict{Phase: v1alpha1.UserPending, Reason: ReasonHookCredentials, Resync: UserPendingResync,
			Message: "the MAIN refused the login of the cluster's spec.auth user: " + Explain(err)}
	case errors.As(err, &e) && e.Query != "":
		return UserVerdict{Phase: v1alpha1.UserFailed, Reason: ReasonMemgraphRefused, Resync: UserFailedResync,
			Message: fmt.Sprintf("%s: %s", e.Query, Explain(err))}
	}
	return UserVerdict{Phase: v1alpha1.UserFailed, Reason: ReasonMemgraphRefused, Message: Explain(err), Resync: UserFailedResync}
}

// NoMainError is a cluster whose MAIN could not be found: there is nowhere to read users from.
type NoMainError struct{ Err error }

func (e NoMainError) Error() string { return e.Err.Error() }
func (e NoMainError) Unwrap() error { return e.Err }

// HookCredentialsError is a cluster the hook cannot reach as it should: spec.tls's or spec.auth's
// Secret missing or unusable (the problem says which and why).
type HookCredentialsError struct{ Problem string }

func (e HookCredentialsError) Error() string { return e.Problem }

// verdictInForce is the verdict of a pass that brought the user to its declaration on MAIN main.
func verdictInForce(username, main string, in InForce) UserVerdict {
	roles := "no role"
	if len(in.Roles) > 0 {
		roles = "roles " + strings.Join(in.Roles, ", ")
	}
	return UserVerdict{Phase: v1alpha1.UserReady, Reason: ReasonUserInForce,
		Message: fmt.Sprintf("user %s is in force on MAIN %s with %s and %d privileges", username, main, roles, len(in.Privileges))}
}
