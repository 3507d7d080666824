package hooks

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// rotate is the certificate rotation stage, for a settled pass that wrote nothing, with spec.tls whose Secret
// content the StatefulSets do not record as reloaded everywhere: it sees which
// certificate each declared instance serves (a TLS handshake of its own), and while some serve
// another than the Secret's tls.crt it asks planner.PlanRotation what to do and does it, one
// instance at a time: the reload queries, then a new handshake to prove the new certificate is
// served, before asking again. A refused reload ends the stage with the restart decision, which
// the response records on the StatefulSets (render). Each reload becomes a status.operations
// record. A dry run only plans. It returns the last step planned (zero when it had nothing to
// rotate).
func (h *handler) rotate(ctx context.Context, conn memgraph.Connector, in *passInput) planner.RotationStep {
	probe, ok := conn.(memgraph.CertificateProbe)
	if in.obs.tls.Config == nil || !ok || ctx.Err() != nil {
		return planner.RotationStep{}
	}
	members := planner.RotationOrder(in.declared)
	record, now := in.obs.certificateRecord(), h.cfg.Now()
	input := planner.RotationInput{Want: in.obs.tls.Leaf, Stamp: in.obs.tls.Stamp, Restarting: record.Restart,
		Reloaded: record.Reloaded, SeenAt: now, Now: now, Grace: h.cfg.ProjectionGrace,
		Refused: map[string]string{}, Accepted: map[string]bool{}, Unproven: map[string]bool{}}
	if stamp, at, ok := record.SeenStamp(); ok && stamp == input.Stamp {
		input.SeenAt = at
	}
	if record.Seen == "" || input.Reloaded == input.Stamp {
		// The first record (the pods started with these files), or every instance reloaded this
		// content: nothing to rotate, and a converged sync costs no handshake.
		return planner.RotationStep{}
	}
	input.Served = make([]planner.ServedCertificate, len(members))
	for i, m := range members {
		input.Served[i] = served(ctx, probe, m)
	}
	for range len(members) + 1 {
		step := planner.PlanRotation(input)
		if step.Action != planner.RotationReload || in.dryRun || ctx.Err() != nil {
			return step
		}
		i := memberIndex(members, step.Member)
		msg, answered := h.reload(ctx, conn, in, members[i])
		if !answered {
			return step // unreachable or out of budget: the next pass sees again
		}
		if msg != "" {
			input.Refused[members[i].Name] = msg
			continue
		}
		input.Accepted[members[i].Name] = true
		if input.Served[i] = served(ctx, probe, members[i]); input.Served[i].Leaf != input.Want {
			input.Unproven[members[i].Name] = true
			continue
		}
		h.log.Info("reloaded the TLS certificates", "instance", members[i].Name)
	}
	return planner.PlanRotation(input)
}

func memberIndex(members []topology.Member, name string) int {
	for i, m := range members {
		if m.Name == name {
			return i
		}
	}
	return -1
}

// served is the certificate m serves, seen by a new handshake.
func served(ctx context.Context, probe memgraph.CertificateProbe, m topology.Member) planner.ServedCertificate {
	leaf, err := probe.ServedCertificate(ctx, m.BoltServer)
	if err != nil {
		return planner.ServedCertificate{Member: m.Name, Problem: err.Error()}
	}
	return planner.ServedCertificate{Member: m.Name, Leaf: memgraph.Digest(leaf)}
}

// reload sends RELOAD BOLT_SERVER TLS and, when m's pod runs with intra-cluster TLS, RELOAD
// INTRA_CLUSTER TLS to m (a data instance with spec.auth's credentials: the account needs the
// RELOAD_TLS privilege), records each as an operation, and returns the refusal ("" when both
// succeeded); answered is false when m could not be asked (unreachable, or the budget ran out),
// which is no refusal. The pod decides, not the spec: Memgraph reloads the files its process
// started with (interpreter.cpp 5205–5246), so a pod started with the --cluster-* flags keeps
// needing the reload while a spec that turns intra-cluster TLS off waits for hibernation, and one
// started without them refuses it ("key or certificate file is empty", cluster_tls.cpp 38–41).
func (h *handler) reload(ctx context.Context, conn memgraph.Connector, in *passInput, m topology.Member) (refusal string, answered bool) {
	if _, data := topology.ParseDataInstanceName(m.Name); data {
		authed, problem := catchUpReader{conn: conn, auth: in.obs.auth}.connector()
		if problem != "" {
			return problem, true
		}
		conn = authed
	}
	reloader, ok := conn.Client(m.BoltServer).(memgraph.TLSReloader)
	if !ok {
		return "this hook's Bolt connector cannot send RELOAD … TLS", true
	}
	queries := []string{memgraph.ReloadBoltTLSQuery}
	if in.obs.clusterTLS[m.Pod] {
		queries = append(queries, memgraph.ReloadClusterTLSQuery)
	}
	for _, q := range queries {
		err := reloader.ReloadTLS(ctx, q)
		rec := topology.OperationRecord{Time: metav1.NewTime(in.sent.now().UTC()), Command: q, Outcome: topology.OperationSucceeded,
			Message: "on " + m.Name}
		result := "ok"
		if err != nil {
			rec.Outcome, rec.Message, result = topology.OperationFailed, fmt.Sprintf("on %s: %s", m.Name, memgraphMessage(err)), "error"
		}
		switch memgraph.KindOf(err) {
		case memgraph.KindUnreachable, memgraph.KindTimeout, memgraph.KindClosed:
			rec.Outcome, result = topology.OperationInterrupted, "interrupted"
		}
		in.sent.count(planner.KindReloadTLS, result)
		in.sent.records = append(in.sent.records, rec)
		if err != nil {
			return memgraphMessage(err), rec.Outcome == topology.OperationFailed
		}
	}
	return "", true
}
