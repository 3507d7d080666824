package users

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"golang.org/x/crypto/bcrypt"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/wire"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
)

// pass is one call of a MemgraphUser's hook: it asks the planner for the next step
// (planner.NextUser), performs it on the cluster's MAIN, adds what it gave to the pass's record,
// and asks again, until the planner says it is done — every decision is the planner's, made on
// the request and that record alone.
type pass struct {
	ctl    *Controller
	u      *v1alpha1.MemgraphUser
	in     planner.UserPass
	reach  Reach // from the cluster's user-access Secret: spec.tls's CA, spec.auth's login (the hook's own)
	creds  credentials
	client memgraph.UserClient // the MAIN's, once reached
	log    *slog.Logger
}

func (ctl *Controller) newPass(u *v1alpha1.MemgraphUser, obs *observation, finalizing, dryRun bool) *pass {
	p := &pass{ctl: ctl, u: u, log: ctl.cfg.Log.With("user", wire.ObjectKey(u.Namespace, u.Name)),
		in: planner.UserPass{User: u, Cluster: obs.cluster, ClusterProblem: obs.clusterNG, Finalizing: finalizing, DryRun: dryRun}}
	if obs.cluster != nil {
		p.reach, p.in.Access = readAccess(obs.cluster, obs.access)
	}
	var err error
	p.creds, err = ctl.credentialsOf(u, obs)
	if err != nil {
		p.in.Password.Unavailable = err.Error()
	}
	p.in.Password.Version, p.in.Password.Problem, p.in.Password.Generating = p.creds.version, p.creds.problem, p.creds.pending
	return p
}

// run performs the steps the planner asks for until it is done, and writes the log lines.
func (p *pass) run(ctx context.Context) planner.UserDone {
	var record []planner.UserResult
	for {
		switch s := planner.NextUser(&p.in, record).(type) {
		case planner.UserRead:
			record = append(record, p.read(ctx, s))
		case planner.UserWrite:
			record = append(record, p.write(ctx, s))
		case planner.UserDone:
			for _, e := range s.Events {
				p.log.Log(ctx, slog.Level(e.Level), e.Msg, e.Args...)
			}
			return s
		}
	}
}

// read performs one read on the MAIN, or reaches it.
func (p *pass) read(ctx context.Context, r planner.UserRead) planner.UserResult {
	var got planner.UserResult
	switch r.What {
	case planner.UserReadMain:
		got.Main, got.Problem, got.Err = p.reachMain(ctx)
	case planner.UserReadUsers:
		got.Users, got.Err = p.client.ShowUsers(ctx)
	case planner.UserReadRoles:
		got.Roles, got.Err = p.client.ShowRoles(ctx)
	case planner.UserReadRolesOf:
		got.RolesOf, got.Err = p.client.ShowRolesForUser(ctx, r.Target.Name)
	case planner.UserReadPrivileges:
		got.Privileges, got.Err = p.client.ShowPrivileges(ctx, r.Target, r.Database)
	case planner.UserReadDatabases:
		got.Databases, got.Err = p.client.ShowDatabasePrivileges(ctx, r.Target)
	}
	return got
}

// reachMain finds the cluster's MAIN and a client of it that manages users: problem says why
// the cluster cannot be reached as its Secrets say, err why no MAIN (main "") or why it
// cannot be used.
func (p *pass) reachMain(ctx context.Context) (main, problem string, err error) {
	c := p.in.Cluster
	coordinators, data, problems := p.ctl.cfg.Reach(c, p.reach)
	if len(problems) > 0 {
		return "", strings.Join(problems, "; "), nil
	}
	found, err := p.ctl.cfg.FindMain(ctx, coordinators, c)
	if err != nil {
		return "", "", err
	}
	client, ok := data.Client(found.BoltServer).(memgraph.UserClient)
	if !ok {
		return found.Name, "", errors.New("this hook's Bolt connector cannot manage users")
	}
	p.client = client
	return found.Name, "", nil
}

// write sends one statement on the MAIN, a password as a bcrypt hash made now.
func (p *pass) write(ctx context.Context, w planner.UserWrite) planner.UserResult {
	var got planner.UserResult
	s := w.Statement.AuthStatement
	if w.Statement.NeedsPassword() {
		var err error
		if s.Password, err = p.hash(w.Statement.HookUser); err != nil {
			got.Problem = err.Error()
			return got
		}
	}
	got.Err = p.client.RunAuth(ctx, s)
	return got
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
