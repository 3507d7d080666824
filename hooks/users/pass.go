package users

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"golang.org/x/crypto/bcrypt"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/wire"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// pass is one call of a MemgraphUser's hook: read → plan → act → report.
type pass struct {
	ctl      *Controller
	u        *v1alpha1.MemgraphUser
	obs      *observation
	spec     planner.UserSpec
	declared map[string]planner.RoleSpec
	reach    Reach  // from the cluster's user-access Secret: spec.tls's CA, spec.auth's login (the hook's own)
	access   string // why the user-access Secret cannot be used yet ("" when it can)
	creds    credentials
	dryRun   bool
	log      *slog.Logger
	sent     []string // the statements sent, as their Text
}

func (ctl *Controller) newPass(u *v1alpha1.MemgraphUser, obs *observation, dryRun bool) *pass {
	spec := planner.DeclaredUser(u)
	p := &pass{ctl: ctl, u: u, obs: obs, spec: spec, declared: declaredRoles(obs.cluster, spec), dryRun: dryRun,
		log: ctl.cfg.Log.With("user", wire.ObjectKey(u.Namespace, u.Name))}
	if c := obs.cluster; c != nil {
		p.reach, p.access = readAccess(c, obs.access)
	}
	return p
}

// gate is everything the pass must know before it reads the cluster.
func (p *pass) gate() planner.UserGate {
	g := planner.UserGate{Cluster: p.u.Spec.Cluster, ClusterFound: p.obs.cluster != nil || p.obs.clusterNG != "",
		ClusterProblem: p.obs.clusterNG, Username: p.spec.Username, PasswordProblem: p.creds.problem, Generating: p.creds.pending}
	for _, v := range v1alpha1.UserViolations(p.u) {
		g.SpecProblems = append(g.SpecProblems, v.Field+": "+v.Message)
	}
	if c := p.obs.cluster; c != nil {
		g.ClusterHasAuth = c.AuthSecretName() != ""
		g.Hibernated = c.Hibernate()
		g.AccessPending = p.access
		g.HookCredentials = p.reach.Auth.Problem
		if p.reach.Auth.Creds != nil {
			g.HookUser = p.reach.Auth.Creds.Username
		}
		g.UndeclaredRoles = planner.UndeclaredRoles(p.spec, p.declared)
	}
	return g
}

// sync brings the user on the MAIN to its declaration.
func (p *pass) sync(ctx context.Context) userResponse {
	var err error
	if p.creds, err = p.ctl.credentialsOf(p.u, p.obs); err != nil {
		return p.answer(planner.UserVerdict{Phase: v1alpha1.UserPending, Reason: planner.ReasonCredentialsPending, Message: err.Error(),
			Resync: planner.UserPendingResync}, nil, "")
	}
	if w := planner.UserWaits(p.gate()); w.Reason != "" {
		return p.answer(planner.VerdictOfWait(w), nil, "")
	}
	main, client, err := p.reachMain(ctx)
	if err != nil {
		return p.answer(planner.VerdictOfError(err), nil, "")
	}
	in, err := p.read(ctx, client)
	if err != nil {
		return p.answer(planner.VerdictOfError(err), nil, "")
	}
	if missing := planner.MissingBuiltinRoles(p.spec, p.declared, in.Users, in.roleInfos); len(missing) > 0 {
		return p.answer(planner.VerdictOfWait(planner.UserWait{Failed: true, Wait: planner.Wait{Reason: planner.ReasonUnknownRole,
			Message: fmt.Sprintf("role %s is not declared in the cluster's spec.roles, and the MAIN %s has no such role (Memgraph creates "+
				"the built-in roles with the first user of an instance that has no role yet); declare it; nothing was sent to Memgraph",
				strings.Join(missing, ", "), main.Name)}}), nil, "")
	}
	plan := planner.PlanUser(in.UserInput)
	if p.dryRun {
		return p.dryRunAnswer(plan, in.User, main.Name)
	}
	applied, err := p.execute(ctx, client, plan)
	state := in.User
	if len(p.sent) > 0 {
		if read, rerr := p.readUser(ctx, client); rerr == nil {
			state = read
		} else if err == nil {
			err = rerr
		}
	}
	out := p.answer(planner.VerdictInForce(p.spec.Username, main.Name, planner.UserInForce(state)), &state, plan.MainDatabase)
	if err != nil {
		out = p.answer(planner.VerdictOfError(err), &state, "")
		if slices.ContainsFunc(p.sent, func(s string) bool { return strings.HasPrefix(s, string(memgraph.AuthRevokeDatabase)) }) {
			out.Status.MainDatabase = "" // a REVOKE DATABASE may have cleared it, and SET MAIN DATABASE did not follow
		}
	}
	if applied {
		out.Status.AppliedPasswordVersion = p.creds.version
	}
	return out
}

// reachMain finds the cluster's MAIN and a client of it that manages users.
func (p *pass) reachMain(ctx context.Context) (topology.DataInstance, memgraph.UserClient, error) {
	c := p.obs.cluster
	if p.reach.TLSProblem != "" {
		return topology.DataInstance{}, nil, planner.HookCredentialsError{Problem: p.reach.TLSProblem}
	}
	coordinators, data, problems := p.ctl.cfg.Reach(c, p.reach)
	if len(problems) > 0 {
		return topology.DataInstance{}, nil, planner.HookCredentialsError{Problem: strings.Join(problems, "; ")}
	}
	main, err := p.ctl.cfg.FindMain(ctx, coordinators, c)
	if err != nil {
		return topology.DataInstance{}, nil, planner.NoMainError{Err: err}
	}
	client, ok := data.Client(main.BoltServer).(memgraph.UserClient)
	if !ok {
		return main, nil, errors.New("this hook's Bolt connector cannot manage users")
	}
	return main, client, nil
}

// observed is what the pass read of the MAIN: the planner's input, and SHOW ROLES.
type observed struct {
	planner.UserInput
	roleInfos []memgraph.RoleInfo
}

// read is every read the plan needs, in order: SHOW USERS, SHOW ROLES, each role the user
// names (its databases; a declared one's privileges too), and the user when it exists.
func (p *pass) read(ctx context.Context, client memgraph.UserClient) (observed, error) {
	in := observed{UserInput: planner.UserInput{Spec: p.spec, Declared: p.declared, Roles: map[string]planner.RoleState{},
		PasswordChanged: p.creds.version != p.u.Status.AppliedPasswordVersion, MainDatabase: p.u.Status.MainDatabase}}
	if p.reach.Auth.Creds != nil {
		in.HookUser = p.reach.Auth.Creds.Username
	}
	var err error
	if in.Users, err = client.ShowUsers(ctx); err != nil {
		return in, err
	}
	if in.roleInfos, err = client.ShowRoles(ctx); err != nil {
		return in, err
	}
	for _, name := range p.spec.Roles {
		i := slices.IndexFunc(in.roleInfos, func(r memgraph.RoleInfo) bool { return r.Name == name })
		if i < 0 {
			continue
		}
		st := planner.RoleState{Exists: true, Builtin: in.roleInfos[i].Builtin}
		if st.Databases, err = client.ShowDatabasePrivileges(ctx, memgraph.RoleTarget(name)); err != nil {
			return in, err
		}
		if decl, ok := p.declared[name]; ok {
			if st.Privileges, err = client.ShowPrivileges(ctx, memgraph.RoleTarget(name), planner.RoleReadDatabase(decl)); err != nil {
				return in, err
			}
		}
		in.Roles[name] = st
	}
	if slices.Contains(in.Users, p.spec.Username) {
		in.User, err = p.readUser(ctx, client)
	}
	return in, err
}

// readUser reads the user: its roles, its privileges on its main database, its databases.
func (p *pass) readUser(ctx context.Context, client memgraph.UserClient) (planner.UserState, error) {
	st := planner.UserState{Exists: true}
	t := memgraph.UserTarget(p.spec.Username)
	var err error
	if st.Roles, err = client.ShowRolesForUser(ctx, p.spec.Username); err != nil {
		return st, err
	}
	if st.Privileges, err = client.ShowPrivileges(ctx, t, p.spec.MainDatabase); err != nil {
		return st, err
	}
	st.Databases, err = client.ShowDatabasePrivileges(ctx, t)
	return st, err
}

// execute sends the plan's statements in order, each password a bcrypt hash made now. A CREATE
// USER that finds the user created meanwhile (another call, or by hand) sets its password
// instead; the hook's own user found created is left as it is. It reports whether the user's
// password was set.
func (p *pass) execute(ctx context.Context, client memgraph.UserClient, plan planner.UserPlan) (bool, error) {
	applied := false
	for _, cmd := range plan.Commands {
		s := cmd.AuthStatement
		if cmd.NeedsPassword() {
			var err error
			if s.Password, err = p.hash(cmd.HookUser); err != nil {
				return applied, err
			}
		}
		err := client.RunAuth(ctx, s)
		if err != nil && s.Kind == memgraph.AuthCreateUser && memgraph.KindOf(err) == memgraph.KindAlreadyExists {
			if cmd.HookUser {
				err = nil
			} else {
				s.Kind = memgraph.AuthSetPassword
				err = client.RunAuth(ctx, s)
			}
		}
		if err != nil {
			p.log.Warn("user statement refused", "statement", s.Text(), "error", planner.Explain(err))
			return applied, err
		}
		p.log.Debug("user statement", "statement", s.Text())
		p.sent = append(p.sent, s.Text())
		applied = applied || cmd.NeedsPassword() && !cmd.HookUser
	}
	return applied, nil
}

// hash is the bcrypt hash of the user's password, or of spec.auth's for the hook's own user, as
// Memgraph takes a hash ("bcrypt:" and the hash).
func (p *pass) hash(hookUser bool) (memgraph.Password, error) {
	password, whose := p.creds.password, "the user's password"
	if hookUser {
		password, whose = p.reach.Auth.Creds.Password, "spec.auth's password"
	}
	h, err := bcrypt.GenerateFromPassword([]byte(password), p.ctl.cfg.HashCost)
	if errors.Is(err, bcrypt.ErrPasswordTooLong) {
		return memgraph.Password{}, fmt.Errorf("%s is longer than %d bytes, all a bcrypt hash reads; choose a shorter one", whose, maxPasswordBytes)
	}
	if err != nil {
		return memgraph.Password{}, fmt.Errorf("hash %s: %w", whose, err)
	}
	return memgraph.PasswordHash("bcrypt:" + string(h)), nil
}

// dryRunAnswer is the answer of a dry run: the status of what was read, and the plan.
func (p *pass) dryRunAnswer(plan planner.UserPlan, state planner.UserState, main string) userResponse {
	v := planner.VerdictInForce(p.spec.Username, main, planner.UserInForce(state))
	if len(plan.Commands) > 0 {
		v = planner.UserVerdict{Phase: v1alpha1.UserPending, Reason: "DryRun", Resync: planner.UserPendingResync,
			Message: fmt.Sprintf("dry run: %d statements to send on MAIN %s", len(plan.Commands), main)}
	}
	out := p.answer(v, &state, "")
	for _, c := range plan.Commands {
		out.Plan = append(out.Plan, c.Text())
	}
	return out
}

// finalize drops the user before the MemgraphUser goes (deletionPolicy Delete), and lets it go
// once SHOW USERS no longer lists it — at once with Retain, for the hook's own user, and when
// the cluster is gone (and the user with it).
func (p *pass) finalize(ctx context.Context) userResponse {
	done := func(reason, msg string) userResponse {
		out := p.answer(planner.UserVerdict{Phase: v1alpha1.UserReady, Reason: reason, Message: msg}, nil, "")
		out.Finalized = true
		return out
	}
	p.creds, _ = p.ctl.credentialsOf(p.u, p.obs)
	g := p.gate()
	switch {
	case p.u.Spec.DeletionPolicy == v1alpha1.UserRetain:
		return done(planner.ReasonUserRetained, "deletionPolicy Retain: user "+p.spec.Username+" stays in Memgraph")
	case !g.ClusterFound:
		return done(planner.ReasonUserDropped, "MemgraphCluster "+p.u.Spec.Cluster+" is gone, and its users with it")
	case g.ClusterFound && p.obs.cluster != nil && !g.ClusterHasAuth:
		return done(planner.ReasonUserRetained, "MemgraphCluster "+p.u.Spec.Cluster+" has no spec.auth: the hook never had the user")
	case g.HookUser != "" && strings.EqualFold(g.HookUser, p.spec.Username):
		return done(planner.ReasonUserRetained, "user "+p.spec.Username+" is the cluster's spec.auth user: never dropped")
	}
	g.SpecProblems, g.UndeclaredRoles, g.PasswordProblem, g.Generating = nil, nil, "", false
	if w := planner.UserWaits(g); w.Reason != "" {
		w.Message += "; the user is dropped then (or set deletionPolicy: Retain to keep it and delete the MemgraphUser now)"
		v := planner.VerdictOfWait(w)
		v.Phase = v1alpha1.UserPending
		return p.answer(v, nil, "")
	}
	_, client, err := p.reachMain(ctx)
	var users []string
	if err == nil {
		users, err = client.ShowUsers(ctx)
	}
	drop := planner.PlanDrop(p.spec.Username, users)
	if err == nil && p.dryRun && len(drop) > 0 {
		out := p.answer(planner.UserVerdict{Phase: v1alpha1.UserPending, Reason: "DryRun", Message: "dry run: DROP USER not sent"}, nil, "")
		out.Plan = []string{drop[0].Text()}
		return out
	}
	if err == nil {
		_, err = p.execute(ctx, client, planner.UserPlan{Commands: drop})
	}
	if err != nil {
		return p.answer(planner.VerdictOfError(err), nil, "")
	}
	return done(planner.ReasonUserDropped, "user "+p.spec.Username+" is not in Memgraph")
}
