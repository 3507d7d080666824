package hooks

import (
	"encoding/json"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/backupcontroller"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/users"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/wire"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
)

// render builds the response from what the pass decided alone, appended to dst: the desired
// children as the pass says to render them, and the status its verdicts and the observations
// give, with op as status.lastOperation and ops as status.operations. It is pure; now stamps a
// condition whose status changed.
func render(dst []byte, p *admittedParent, obs *observation, done planner.Done, op *v1alpha1.Operation, ops []v1alpha1.OperationRecord, now time.Time) ([]byte, error) {
	out := done.Outcome
	children, appended, err := desiredChildren(p, obs, done)
	if err != nil {
		return nil, err
	}
	st := done.Status(obs.ignored.Render(), op, ops, now)
	resp := &wire.SyncResponse{Status: st, Children: children, Appended: appended, ResyncAfterSeconds: done.Verdicts.ResyncAfterSeconds}
	if out.DryRun {
		resp.Plan = make([]string, 0, len(out.Plan.Commands))
		for _, cmd := range append(out.Plan.Commands[:len(out.Plan.Commands):len(out.Plan.Commands)], out.Settings.Step.Commands...) {
			resp.Plan = append(resp.Plan, cmd.String())
		}
	}
	return resp.AppendTo(dst)
}

// desiredChildren are the children a pass returns, as a JSON array and one child appended to it
// (nil: none): every observed one frozen while paused, else the cluster's as the pass says to
// render them (rendered once per distinct input, admittedParent.children), the backup-agent
// Secret and, with spec.auth, the user-access Secret. The Secrets are appended as they are, not
// spliced into a copy of the array.
func desiredChildren(p *admittedParent, obs *observation, done planner.Done) (children []byte, appended [][]byte, err error) {
	if done.Outcome.Paused {
		children, err = json.Marshal(obs.frozen)
		return children, nil, err
	}
	if children, err = p.children(done.Children); err != nil {
		return nil, nil, err
	}
	agent, err := p.agentSecretChild(backupcontroller.AgentSecretOf(p.cluster, obs.agentSecret, obs.backupCopies))
	if err != nil {
		return nil, nil, err
	}
	access, err := p.userAccessChild(users.AccessOf(p.cluster, obs.tls, obs.auth))
	if err != nil {
		return nil, nil, err
	}
	for _, child := range [][]byte{agent, access} {
		if child != nil {
			appended = append(appended, child)
		}
	}
	return children, appended, nil
}
