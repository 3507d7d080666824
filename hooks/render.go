package hooks

import (
	"encoding/json"
	"time"

	"github.com/memgraph-hooks/memgraph-hooks/hooks/backups"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/users"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/wire"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// render builds the response from the pass's outcome alone, appended to dst: the desired children at
// the replica counts the outcome permits, and the status the verdict (planner.Verdict) and the
// observations give, with op as status.lastOperation and ops as status.operations. It is pure; now stamps a condition whose
// status changed.
func render(dst []byte, p *admittedParent, obs *observation, out planner.Outcome, op *topology.Operation, ops []topology.OperationRecord, now time.Time) ([]byte, planner.Verdicts, error) {
	v := planner.Verdict(out)
	children, appended, err := desiredChildren(p, obs, out, now)
	if err != nil {
		return nil, v, err
	}
	st := planner.Status(planner.StatusInput{Cluster: p.cluster, Outcome: out, Verdicts: v, Ignored: obs.ignored.Render(),
		LastOperation: op, Operations: ops, Now: now})
	resp := &wire.SyncResponse{Status: st, Children: children, Appended: appended, ResyncAfterSeconds: v.ResyncAfterSeconds}
	if out.DryRun {
		resp.Plan = make([]string, 0, len(out.Plan.Commands))
		for _, cmd := range append(out.Plan.Commands[:len(out.Plan.Commands):len(out.Plan.Commands)], out.Settings.Step.Commands...) {
			resp.Plan = append(resp.Plan, cmd.String())
		}
	}
	raw, err := resp.AppendTo(dst)
	return raw, v, err
}

// desiredChildren are the children a pass returns, as a JSON array and one child appended to it
// (nil: none): every observed one frozen while paused, else the cluster's at the replica counts
// the outcome permits, shaped for hibernation and with the MAIN's budget once the MAIN is known
// (planner.MainBudgetPod; rendered once per distinct input, admittedParent.children), the
// backup-agent Secret and, with spec.auth, the user-access Secret. The Secrets are appended as
// they are, not spliced into a copy of the array.
func desiredChildren(p *admittedParent, obs *observation, out planner.Outcome, now time.Time) (children []byte, appended [][]byte, err error) {
	if out.Paused {
		children, err = json.Marshal(obs.frozen)
		return children, nil, err
	}
	if children, err = renderedChildren(p, obs, out, now); err != nil {
		return nil, nil, err
	}
	agent, err := p.agentSecretChild(backups.AgentSecretOf(p.cluster, obs.agentSecret, obs.backupCopies))
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

// renderedChildren are the cluster's children from topology (cached per distinct input).
func renderedChildren(p *admittedParent, obs *observation, out planner.Outcome, now time.Time) ([]byte, error) {
	r := rendering{replicas: out.Replicas, partitions: out.Rollout.Partitions, generations: out.Rollout.TemplateGenerations,
		mainPod: planner.MainBudgetPod(out, obs.mainBudgetPod), heldPod: obs.mainBudgetPod, restart: obs.certificateRecord().Restart,
		record: planner.NextCertificateRecord(obs.certificateRecord(), obs.tls.Stamp, out, now),
		agent:  p.agentPin(obs), records: out.Rollout.Records}
	if w := out.Hibernation.Window; w != nil {
		r.window, r.windowed = *w, true
	}
	return p.children(r)
}
