package users

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/wire"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
)

// pass is one call of a MemgraphUser's hook: it asks the planner for the next step
// (planner.NextUser), performs it (planner.UserEffects: the cluster reached with what its
// user-access Secret carries, a password's hash), adds what it gave to the pass's record, and
// asks again, until the planner says it is done — every decision is the planner's, made on the
// request and that record alone.
type pass struct {
	ctl   *Controller
	u     *v1alpha1.MemgraphUser
	in    planner.UserPass
	reach Reach // from the cluster's user-access Secret: spec.tls's CA, spec.auth's login (the hook's own)
	creds credentials
	// coordinators and data reach the cluster, once reached: data with spec.auth's login.
	coordinators, data memgraph.Connector
	log                *slog.Logger
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
		step := planner.NextUser(&p.in, record)
		if done, ok := step.(planner.UserDone); ok {
			for _, e := range done.Events {
				p.log.Log(ctx, slog.Level(e.Level), e.Msg, e.Args...)
			}
			return done
		}
		record = append(record, step.Perform(ctx, p))
	}
}

// Reach makes the connectors of the user's cluster from its user-access Secret.
func (p *pass) Reach() (problem string) {
	p.coordinators, p.data, problem = p.reach.connectors(p.in.Cluster, p.ctl.cfg.Connector)
	return problem
}

// ShowInstances is SHOW INSTANCES on a coordinator, within its share of the time left.
func (p *pass) ShowInstances(ctx context.Context, coordinator string, share int) ([]memgraph.Instance, error) {
	if deadline, ok := ctx.Deadline(); ok && share > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Until(deadline)/time.Duration(share+1))
		defer cancel()
	}
	return p.coordinators.Client(coordinator).ShowInstances(ctx)
}

// Main is the client of the MAIN at address, with spec.auth's login.
func (p *pass) Main(address string) (memgraph.UserClient, error) {
	client, ok := p.data.Client(address).(memgraph.UserClient)
	if !ok {
		return nil, errors.New("this hook's Bolt connector cannot manage users")
	}
	return client, nil
}

// PasswordHash is the bcrypt hash of the user's password, or of spec.auth's for the hook's own
// user, as Memgraph takes a hash ("bcrypt:" and the hash).
func (p *pass) PasswordHash(hookUser bool) (memgraph.Password, error) {
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
