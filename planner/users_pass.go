package planner

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// The stages of a MemgraphUser's pass, in order: the gates (userWaits), the MAIN, what it shows
// of the users and roles, the statements (planUser), the user read again after them, the verdict.

// sync brings the user on the MAIN to its declaration.
func (w *userWalk) sync() UserDone {
	if why := w.in.Password.Unavailable; why != "" {
		return w.answer(UserVerdict{Phase: v1alpha1.UserPending, Reason: ReasonCredentialsPending, Message: why, Resync: UserPendingResync}, nil, "")
	}
	if wait := userWaits(w.gate()); wait.Reason != "" {
		return w.answer(verdictOfWait(wait), nil, "")
	}
	main, ok, err := w.main()
	if !ok {
		return UserDone{}
	}
	if err != nil {
		return w.answer(verdictOfError(err), nil, "")
	}
	in, roles, ok, err := w.observe()
	if !ok {
		return UserDone{}
	}
	if err != nil {
		return w.answer(verdictOfError(err), nil, "")
	}
	if missing := missingBuiltinRoles(w.spec, w.declared, in.Users, roles); len(missing) > 0 {
		return w.answer(verdictOfWait(userWait{Failed: true, Wait: Wait{Reason: ReasonUnknownRole,
			Message: fmt.Sprintf("role %s is not declared in the cluster's spec.roles, and the MAIN %s has no such role (Memgraph creates "+
				"the built-in roles with the first user of an instance that has no role yet); declare it; nothing was sent to Memgraph",
				strings.Join(missing, ", "), main)}}), nil, "")
	}
	plan := planUser(in)
	if w.in.DryRun {
		return w.dryRun(plan, in.User, main)
	}
	applied, ok, err := w.execute(plan.Commands)
	if !ok {
		return UserDone{}
	}
	state := in.User
	if len(w.sent) > 0 {
		read, ok, rerr := w.readUser()
		switch {
		case !ok:
			return UserDone{}
		case rerr == nil:
			state = read
		case err == nil:
			err = rerr
		}
	}
	out := w.answer(verdictInForce(w.spec.Username, main, userInForce(state)), &state, plan.MainDatabase)
	if err != nil {
		out = w.answer(verdictOfError(err), &state, "")
		if slices.ContainsFunc(w.sent, func(c AuthCommand) bool { return c.Kind == memgraph.AuthRevokeDatabase }) {
			out.Status.MainDatabase = "" // a REVOKE DATABASE may have cleared it, and SET MAIN DATABASE did not follow
		}
	}
	if applied {
		out.Status.AppliedPasswordVersion = w.in.Password.Version
	}
	return out
}

// finalize drops the user before the MemgraphUser goes (deletionPolicy Delete), and lets it go
// once SHOW USERS no longer lists it — at once with Retain, for the hook's own user, and when
// the cluster is gone (and the user with it).
func (w *userWalk) finalize() UserDone {
	done := func(reason, msg string) UserDone {
		out := w.answer(UserVerdict{Phase: v1alpha1.UserReady, Reason: reason, Message: msg}, nil, "")
		out.Finalized = true
		return out
	}
	u, g := w.in.User, w.gate()
	switch {
	case u.Spec.DeletionPolicy == v1alpha1.UserRetain:
		return done(ReasonUserRetained, "deletionPolicy Retain: user "+w.spec.Username+" stays in Memgraph")
	case !g.ClusterFound:
		return done(ReasonUserDropped, "MemgraphCluster "+u.Spec.Cluster+" is gone, and its users with it")
	case w.in.Cluster != nil && !g.ClusterHasAuth:
		return done(ReasonUserRetained, "MemgraphCluster "+u.Spec.Cluster+" has no spec.auth: the hook never had the user")
	case g.HookUser != "" && strings.EqualFold(g.HookUser, w.spec.Username):
		return done(ReasonUserRetained, "user "+w.spec.Username+" is the cluster's spec.auth user: never dropped")
	}
	g.SpecProblems, g.UndeclaredRoles, g.PasswordProblem, g.Generating = nil, nil, "", false
	if wait := userWaits(g); wait.Reason != "" {
		wait.Message += "; the user is dropped then (or set deletionPolicy: Retain to keep it and delete the MemgraphUser now)"
		v := verdictOfWait(wait)
		v.Phase = v1alpha1.UserPending
		return w.answer(v, nil, "")
	}
	_, ok, err := w.main()
	if !ok {
		return UserDone{}
	}
	var users []string
	if err == nil {
		var got UserResult
		if got, ok, err = w.read(UserRead{What: UserReadUsers}); !ok {
			return UserDone{}
		}
		users = got.Users
	}
	drop := planDrop(w.spec.Username, users)
	if err == nil && w.in.DryRun && len(drop) > 0 {
		out := w.answer(UserVerdict{Phase: v1alpha1.UserPending, Reason: "DryRun", Message: "dry run: DROP USER not sent"}, nil, "")
		out.Plan = []string{drop[0].Text()}
		return out
	}
	if err == nil {
		if _, ok, err = w.execute(drop); !ok {
			return UserDone{}
		}
	}
	if err != nil {
		return w.answer(verdictOfError(err), nil, "")
	}
	return done(ReasonUserDropped, "user "+w.spec.Username+" is not in Memgraph")
}

// gate is everything the pass must know before it reads the cluster.
func (w *userWalk) gate() userGate {
	in := w.in
	g := userGate{Cluster: in.User.Spec.Cluster, ClusterFound: in.Cluster != nil || in.ClusterProblem != "", ClusterProblem: in.ClusterProblem,
		Username: w.spec.Username, PasswordProblem: in.Password.Problem, Generating: in.Password.Generating}
	for _, v := range v1alpha1.UserViolations(in.User) {
		g.SpecProblems = append(g.SpecProblems, v.Field+": "+v.Message)
	}
	if c := in.Cluster; c != nil {
		g.ClusterHasAuth = c.AuthSecretName() != ""
		g.Hibernated = c.Hibernate()
		g.AccessPending = w.accessPending
		g.HookCredentials = w.access.HookCredentials
		g.HookUser = w.access.HookUser
		g.UndeclaredRoles = undeclaredRoles(w.spec, w.declared)
	}
	return g
}

// accessPending says why the user-access Secret a of cluster c cannot be used yet: it does not
// exist, or follows an older generation of c than the one the request carries — then it may
// hold the TLS or login of a spec the cluster no longer has.
func accessPending(c *topology.Cluster, a UserAccess) string {
	where := fmt.Sprintf("Secret %s/%s", c.Namespace(), topology.UserAccessSecretName(c.Name()))
	switch {
	case !a.Exists:
		return fmt.Sprintf("%s does not exist yet: MemgraphCluster %s's hook writes it on its next sync (it copies spec.tls's CA "+
			"and spec.auth's user there for the cluster's MemgraphUsers); nothing was sent to Memgraph", where, c.Name())
	case a.Generation != strconv.FormatInt(c.Generation(), 10):
		generation := a.Generation
		if generation == "" {
			generation = "(none)"
		}
		return fmt.Sprintf("%s follows generation %s of MemgraphCluster %s, which is at generation %d: the cluster's hook has not "+
			"yet copied the spec.tls and spec.auth of generation %d; nothing was sent to Memgraph",
			where, generation, c.Name(), c.Generation(), c.Generation())
	}
	return ""
}

// main is the MAIN the pass's reads and statements go to, reached with what the user-access
// Secret carries and found as its coordinators' leader names it (findMain); err is why there is
// none.
func (w *userWalk) main() (main string, ok bool, err error) {
	if w.access.TLSProblem != "" {
		return "", true, HookCredentialsError{Problem: w.access.TLSProblem}
	}
	got, ok := w.step(userReach{})
	switch {
	case !ok:
		return "", false, nil
	case got.Problem != "":
		return "", true, HookCredentialsError{Problem: got.Problem}
	}
	found, ok, err := w.findMain()
	switch {
	case !ok:
		return "", false, nil
	case err != nil:
		return "", true, NoMainError{Err: err}
	}
	w.mainAt = found.BoltServer
	return found.Name, true, nil
}

// observe is every read the plan needs, in order: SHOW USERS, SHOW ROLES, each role the user
// names (its databases; a declared one's privileges too), and the user when it exists.
func (w *userWalk) observe() (in userInput, roles []memgraph.RoleInfo, ok bool, err error) {
	in = userInput{Spec: w.spec, Declared: w.declared, Roles: map[string]RoleState{}, HookUser: w.access.HookUser,
		PasswordChanged: w.in.Password.Version != w.in.User.Status.AppliedPasswordVersion, MainDatabase: w.in.User.Status.MainDatabase}
	got, ok, err := w.read(UserRead{What: UserReadUsers})
	if !ok || err != nil {
		return in, nil, ok, err
	}
	in.Users = got.Users
	if got, ok, err = w.read(UserRead{What: UserReadRoles}); !ok || err != nil {
		return in, nil, ok, err
	}
	roles = got.Roles
	for _, name := range w.spec.Roles {
		i := slices.IndexFunc(roles, func(r memgraph.RoleInfo) bool { return r.Name == name })
		if i < 0 {
			continue
		}
		st := RoleState{Exists: true, Builtin: roles[i].Builtin}
		t := memgraph.RoleTarget(name)
		if got, ok, err = w.read(UserRead{What: UserReadDatabases, Target: t}); !ok || err != nil {
			return in, roles, ok, err
		}
		st.Databases = got.Databases
		if decl, declared := w.declared[name]; declared {
			if got, ok, err = w.read(UserRead{What: UserReadPrivileges, Target: t, Database: roleReadDatabase(decl)}); !ok || err != nil {
				return in, roles, ok, err
			}
			st.Privileges = got.Privileges
		}
		in.Roles[name] = st
	}
	if slices.Contains(in.Users, w.spec.Username) {
		in.User, ok, err = w.readUser()
	}
	return in, roles, ok, err
}

// readUser reads the user: its roles, its privileges on its main database, its databases.
func (w *userWalk) readUser() (st UserState, ok bool, err error) {
	st = UserState{Exists: true}
	t := memgraph.UserTarget(w.spec.Username)
	got, ok, err := w.read(UserRead{What: UserReadRolesOf, Target: t})
	if !ok || err != nil {
		return st, ok, err
	}
	st.Roles = got.RolesOf
	if got, ok, err = w.read(UserRead{What: UserReadPrivileges, Target: t, Database: w.spec.MainDatabase}); !ok || err != nil {
		return st, ok, err
	}
	st.Privileges = got.Privileges
	got, ok, err = w.read(UserRead{What: UserReadDatabases, Target: t})
	st.Databases = got.Databases
	return st, ok, err
}

// execute sends the statements in order, up to the first that fails. A CREATE USER that finds
// the user created meanwhile (another call, or by hand) sets its password instead; the hook's own
// user found created is left as it is. applied says whether the user's password was set.
func (w *userWalk) execute(cmds []AuthCommand) (applied, ok bool, err error) {
	for _, cmd := range cmds {
		got, ok := w.step(UserWrite{Statement: cmd, main: w.mainAt})
		if !ok {
			return applied, false, nil
		}
		err := got.Err
		if got.Problem != "" {
			return applied, true, errors.New(got.Problem)
		}
		if err != nil && cmd.Kind == memgraph.AuthCreateUser && memgraph.KindOf(err) == memgraph.KindAlreadyExists {
			if cmd.HookUser {
				err = nil
			} else {
				cmd.Kind = memgraph.AuthSetPassword
				if got, ok = w.step(UserWrite{Statement: cmd, main: w.mainAt}); !ok {
					return applied, false, nil
				}
				if got.Problem != "" {
					return applied, true, errors.New(got.Problem)
				}
				err = got.Err
			}
		}
		if err != nil {
			w.events = append(w.events, Event{Level: LevelWarn, Msg: "user statement refused", Args: []any{"statement", cmd.Text(), "error", Explain(err)}})
			return applied, true, err
		}
		w.events = append(w.events, Event{Level: LevelDebug, Msg: "user statement", Args: []any{"statement", cmd.Text()}})
		w.sent = append(w.sent, cmd)
		applied = applied || cmd.NeedsPassword() && !cmd.HookUser
	}
	return applied, true, nil
}

// dryRun is the end of a dry run: the status of what was read, and the plan.
func (w *userWalk) dryRun(plan userPlan, state UserState, main string) UserDone {
	v := verdictInForce(w.spec.Username, main, userInForce(state))
	if len(plan.Commands) > 0 {
		v = UserVerdict{Phase: v1alpha1.UserPending, Reason: "DryRun", Resync: UserPendingResync,
			Message: fmt.Sprintf("dry run: %d statements to send on MAIN %s", len(plan.Commands), main)}
	}
	out := w.answer(v, &state, "")
	for _, c := range plan.Commands {
		out.Plan = append(out.Plan, c.Text())
	}
	return out
}
