// Package users is the hooks of MemgraphUsers: a user kept on its cluster's MAIN as declared —
// created with its password, its roles, privileges and databases put back when they drift, its
// password set again when its Secret changes — and dropped when the MemgraphUser goes. Every
// decision is the planner's (planner.NextUser, a step machine whose steps the pass performs);
// reaching a cluster's Memgraph with what its user-access Secret carries, holding the passwords,
// and writing the answer each hook returns are the shell's. It shares nothing with a MemgraphCluster's sync but the wire and the
// cluster's user-access Secret, which the cluster's hook writes (AccessOf) and a user's pass
// reads.
package users

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/pending"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/wire"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// Config wires the user controller to the shell.
type Config struct {
	Budget time.Duration // the shared deadline of every query of one hook request
	Now    func() time.Time
	Log    *slog.Logger
	// Connector reaches Memgraph (the hook's Bolt pool); a user's pass adds its cluster's
	// spec.tls CA and spec.auth login from the cluster's user-access Secret (Reach).
	Connector memgraph.Connector
	// NewPassword generates the password of a generated Secret; nil is NewPassword.
	NewPassword func() (string, error)
	// HashCost is the bcrypt cost of the password hashes sent to Memgraph; 0 is bcrypt.DefaultCost.
	HashCost int
}

// Controller serves the MemgraphUser hooks.
type Controller struct {
	cfg       Config
	generated *pending.Cache[string]
}

// New returns the controller of cfg.
func New(cfg Config) *Controller {
	if cfg.NewPassword == nil {
		cfg.NewPassword = NewPassword
	}
	if cfg.HashCost == 0 {
		cfg.HashCost = bcrypt.DefaultCost
	}
	return &Controller{cfg: cfg, generated: pending.New[string]()}
}

// userResponse is a MemgraphUser's hook answer: the generated Secret as its one child (none with
// spec.passwordSecret), and, in a dry run, the statements it would send, passwords hidden.
type userResponse struct {
	Status             v1alpha1.MemgraphUserStatus `json:"status"`
	Children           []any                       `json:"children"`
	ResyncAfterSeconds float64                     `json:"resyncAfterSeconds,omitempty"`
	Finalized          bool                        `json:"finalized,omitempty"`
	Plan               []string                    `json:"plan,omitempty"`
}

// Sync serves a MemgraphUser's sync and finalize hooks (finalizing tells them apart);
// dryRun=true reads and plans but sends nothing, and answers the plan.
func (ctl *Controller) Sync(r *http.Request) (any, error) {
	dryRun, err := wire.DryRun(r.URL.RawQuery)
	if err != nil {
		return nil, err
	}
	var req wire.CompositeRequest
	if err := wire.DecodeRequest(r, &req); err != nil {
		return nil, err
	}
	u, err := decodeUser(req.Parent)
	if err != nil {
		return nil, err
	}
	obs, err := observe(u, &req)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(r.Context(), ctl.cfg.Budget)
	defer cancel()
	p := ctl.newPass(u, &obs, req.Finalizing, dryRun)
	done := p.run(ctx)
	resp := p.answer(done)
	p.log.Info("user", "username", resp.Status.Username, "phase", resp.Status.Phase, "reason", done.Verdict.Reason,
		"statements", done.Sent, "finalizing", req.Finalizing, "finalized", resp.Finalized, "dryRun", dryRun)
	return resp, nil
}

// Customize asks Metacontroller for what a MemgraphUser's hooks read, each by a name its
// own spec gives: its MemgraphCluster, and the Secrets spec.passwordSecret names and the
// cluster's <cluster>-user-access (the copy of what reaching its MAIN takes, access.go); no other
// Secret of the namespace. Every rule depends on the user's spec alone, so Metacontroller's
// answer, cached per UID and generation, never goes stale. (Metacontroller v4.17.2 selects by
// names within the rule's namespace and takes a rule without names as every object of that
// namespace: pkg/controller/common/customize/manager.go 665–682; names exclude a labelSelector,
// 399–425.)
func (ctl *Controller) Customize(r *http.Request) (any, error) {
	var req wire.CompositeRequest
	if err := wire.DecodeRequest(r, &req); err != nil {
		return nil, err
	}
	u, err := decodeUser(req.Parent)
	if err != nil {
		return nil, err
	}
	secrets := []string{topology.UserAccessSecretName(u.Spec.Cluster)}
	if ref := u.Spec.PasswordSecret; ref != nil && ref.Name != "" && ref.Name != secrets[0] {
		secrets = append(secrets, ref.Name)
	}
	rules := []wire.RelatedRule{
		{APIVersion: v1alpha1.APIVersion, Resource: v1alpha1.Resource, Namespace: u.Namespace, Names: []string{u.Spec.Cluster}},
		{APIVersion: "v1", Resource: "secrets", Namespace: u.Namespace, Names: secrets},
	}
	return wire.CustomizeResponse{RelatedResources: rules}, nil
}
