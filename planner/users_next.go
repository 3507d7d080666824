package planner

import (
	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// A MemgraphUser's pass is a step machine of its own, in the shape of a cluster's (Next): the
// shell gathers what the request shows into a UserPass, asks NextUser what to do, performs the
// step it names (UserStep.Perform, with the shell's UserEffects), appends the UserResult to the
// pass's record, and asks again until NextUser says UserDone. Every decision — the gates,
// whether the cluster's user-access Secret may be used, where the MAIN is, the reads, the
// statements, the verdict and which status records carry forward — is NextUser's
// (users_pass.go).

// UserPass is what a MemgraphUser's request shows, gathered once by the shell before the
// pass's first step. The prior status is read for the records it carries forward only.
type UserPass struct {
	User *v1alpha1.MemgraphUser
	// Cluster is the user's MemgraphCluster; nil when the request has none, or one whose spec
	// the hook refuses (ClusterProblem says why).
	Cluster        *topology.Cluster
	ClusterProblem string
	// Access is the cluster's user-access Secret as read; Password the user's password.
	Access   UserAccess
	Password UserPassword
	// Finalizing: the finalize hook asks (the MemgraphUser is being deleted); DryRun: read and
	// plan, send nothing, answer the plan.
	Finalizing, DryRun bool
}

// UserAccess is what the shell read of the cluster's user-access Secret, the cluster's hook's
// copy of what reaching the MAIN takes. Whether it may be used is NextUser's decision: only a
// copy of the cluster's current generation is.
type UserAccess struct {
	Exists bool
	// Generation is its memgraph.com/user-access-generation annotation ("" when absent).
	Generation string
	// TLSProblem is what is wrong with spec.tls's CA as copied; HookUser is spec.auth's
	// username, HookCredentials what is wrong with spec.auth's Secret or its copy.
	TLSProblem      string
	HookUser        string
	HookCredentials string
}

// UserPassword is the user's password as the shell read it, never the password itself.
type UserPassword struct {
	// Version is the password Secret's name and resourceVersion (appliedPasswordVersion once set).
	Version string
	// Problem is what is wrong with spec.passwordSecret's Secret; Generating that the generated
	// Secret is not there yet; Unavailable why no password could be made (sync waits on it).
	Problem     string
	Generating  bool
	Unavailable string
}

// NextUser decides a MemgraphUser's pass's next step from what the request shows (in) and
// everything the pass read and wrote so far (record, in the order performed). It is
// deterministic: the same input and record give the same step.
func NextUser(in *UserPass, record []UserResult) UserStep {
	w := newUserWalk(in, record)
	return next(&w.stepRecord, in.Finalizing, w.finalize, w.sync, func(d UserDone) UserStep { return d })
}

// userWalk replays a MemgraphUser's pass from its start on every NextUser: each step it needs
// is answered from the record in order and, past its end, becomes the pending step.
type userWalk struct {
	in       *UserPass
	spec     UserSpec
	declared map[string]RoleSpec
	access   UserAccess // in.Access once it may be used, zero before
	// accessPending is why the user-access Secret cannot be used yet ("" when it can).
	accessPending string
	stepRecord[UserStep, UserResult]
	sent   []AuthCommand // the statements Memgraph took
	events []Event
	// mainAt is the Bolt address of the MAIN every read and statement goes to, once found.
	mainAt string
}

func newUserWalk(in *UserPass, record []UserResult) *userWalk {
	w := &userWalk{in: in, spec: declaredUser(in.User), stepRecord: stepRecord[UserStep, UserResult]{record: record}}
	w.declared = declaredRoles(in.Cluster, w.spec)
	if in.Cluster != nil {
		w.accessPending = accessPending(in.Cluster, in.Access)
		if w.accessPending == "" {
			w.access = in.Access
		}
	}
	return w
}

// read is one read on the MAIN; err is why it failed.
func (w *userWalk) read(r UserRead) (got UserResult, ok bool, err error) {
	r.main = w.mainAt
	got, ok = w.step(r)
	return got, ok, got.Err
}

// answer is the pass's end for verdict v: the status of what was read of the user (state, nil
// when it was not read) and the records carried forward — appliedPasswordVersion, and
// mainDatabase: main when the pass set it, else the one recorded.
func (w *userWalk) answer(v UserVerdict, state *UserState, main string) UserDone {
	u, prior := w.in.User, w.in.User.Status
	st := v1alpha1.MemgraphUserStatus{ObservedGeneration: u.Generation, Phase: v.Phase, Username: w.spec.Username,
		Secret: u.PasswordSecretName(), AppliedPasswordVersion: prior.AppliedPasswordVersion, MainDatabase: prior.MainDatabase}
	if main != "" {
		st.MainDatabase = main
	}
	if state != nil && state.Exists {
		in := userInForce(*state)
		st.Roles, st.Privileges, st.Databases = in.Roles, in.Privileges, in.Databases
	}
	return UserDone{Verdict: v, Status: st, Sent: len(w.sent), Events: w.events}
}

// declaredRoles are the roles of the cluster c that the user names.
func declaredRoles(c *topology.Cluster, spec UserSpec) map[string]RoleSpec {
	out := map[string]RoleSpec{}
	if c == nil {
		return out
	}
	for _, name := range spec.Roles {
		if r, ok := c.Role(name); ok {
			out[name] = declaredRole(r)
		}
	}
	return out
}
