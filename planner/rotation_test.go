package planner

import (
	"crypto/sha256"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var (
	newLeaf = sha256.Sum256([]byte("new leaf"))
	oldLeaf = sha256.Sum256([]byte("old leaf"))
	seenAt  = time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
)

// rotationFixture: three instances, the Secret's content "new" seen at seenAt, the previous
// content recorded as reloaded; each test names what the instances serve and when it plans.
func rotationFixture(now time.Time, leaves ...[sha256.Size]byte) RotationInput {
	in := RotationInput{Want: newLeaf, Stamp: "new", Reloaded: "old", SeenAt: seenAt, Now: now, Grace: ProjectionGrace,
		Refused: map[string]string{}, Accepted: map[string]bool{}, Unproven: map[string]bool{}}
	for i, l := range leaves {
		in.Served = append(in.Served, ServedCertificate{Member: []string{"instance_0", "instance_1", "coordinator_1"}[i], Leaf: l})
	}
	return in
}

func TestPlanRotation(t *testing.T) {
	early, late := seenAt.Add(10*time.Second), seenAt.Add(ProjectionGrace)
	tests := []struct {
		name string
		in   RotationInput
		want RotationStep
	}{{
		name: "everything reloaded and served",
		in: func() RotationInput {
			in := rotationFixture(early, newLeaf, newLeaf, newLeaf)
			in.Reloaded = "new"
			return in
		}(),
		want: RotationStep{Stamp: "new"},
	}, {
		name: "a stale instance is reloaded first, alone",
		in:   rotationFixture(early, newLeaf, oldLeaf, oldLeaf),
		want: RotationStep{Action: RotationReload, Member: "instance_1", Stale: []string{"instance_1", "coordinator_1"}, Stamp: "new",
			Message: "reloading the certificate of instance_1, one instance at a time: instance_1, coordinator_1 serve another certificate than the Secret's tls.crt"},
	}, {
		name: "accepted but unproven within the grace: the kubelet has not projected yet",
		in: func() RotationInput {
			in := rotationFixture(early, oldLeaf)
			in.Accepted["instance_0"], in.Unproven["instance_0"] = true, true
			return in
		}(),
		want: RotationStep{Action: RotationWait, Stale: []string{"instance_0"}, Stamp: "new",
			Message: "waiting for the kubelet to project the Secret's new files (reloading every instance from 2026-12-06T00:02:00Z): " +
				"instance_0 serve another certificate than the Secret's tls.crt"},
	}, {
		name: "past the grace every instance is reloaded once, served or not",
		in:   rotationFixture(late, newLeaf, newLeaf),
		want: RotationStep{Action: RotationReload, Member: "instance_0", Stamp: "new",
			Message: "reloading the certificate of instance_0, one instance at a time"},
	}, {
		name: "past the grace, every reload accepted: the content is recorded",
		in: func() RotationInput {
			in := rotationFixture(late, newLeaf, newLeaf)
			in.Accepted["instance_0"], in.Accepted["instance_1"] = true, true
			return in
		}(),
		want: RotationStep{Stamp: "new", Record: "new"},
	}, {
		name: "past the grace an unreachable instance holds the record",
		in: func() RotationInput {
			in := rotationFixture(late, newLeaf)
			in.Accepted["instance_0"] = true
			in.Served = append(in.Served, ServedCertificate{Member: "instance_1", Problem: "connection refused"})
			return in
		}(),
		want: RotationStep{Action: RotationWait, Stamp: "new", Message: "waiting to reload the certificate of instance_1, which cannot be reached"},
	}, {
		name: "a refused reload restarts the pods",
		in: func() RotationInput {
			in := rotationFixture(early, oldLeaf, oldLeaf)
			in.Refused["instance_0"] = "Couldn't load server private key from file /etc/memgraph/ssl/tls.key. Error: key values mismatch"
			return in
		}(),
		want: RotationStep{Action: RotationRestart, Stale: []string{"instance_0", "instance_1"}, Stamp: "new",
			Message: "instance_0 refused to reload its certificate (Couldn't load server private key from file /etc/memgraph/ssl/tls.key. " +
				"Error: key values mismatch), so the pods are restarted: instance_0, instance_1 serve another certificate than the Secret's tls.crt"},
	}, {
		name: "a reload refused in the last round restarts too (a new ca.crt a handshake does not show)",
		in: func() RotationInput {
			in := rotationFixture(late, newLeaf)
			in.Refused["instance_0"] = "cluster server TLS: Cluster server TLS: couldn't load CA from /etc/memgraph/ssl/ca.crt: no certificate or crl found"
			return in
		}(),
		want: RotationStep{Action: RotationRestart, Stamp: "new",
			Message: "instance_0 refused to reload its certificate (cluster server TLS: Cluster server TLS: couldn't load CA from " +
				"/etc/memgraph/ssl/ca.crt: no certificate or crl found), so the pods are restarted"},
	}, {
		name: "unproven past the grace restarts the pods",
		in: func() RotationInput {
			in := rotationFixture(late, oldLeaf)
			in.Accepted["instance_0"], in.Unproven["instance_0"] = true, true
			return in
		}(),
		want: RotationStep{Action: RotationRestart, Stale: []string{"instance_0"}, Stamp: "new",
			Message: "instance_0 reloaded but still serves the previous certificate 2m0s after the Secret changed, so the pods are " +
				"restarted: instance_0 serve another certificate than the Secret's tls.crt"},
	}, {
		name: "a restart already chosen for this content is not second-guessed by a reload",
		in:   func() RotationInput { in := rotationFixture(early, oldLeaf); in.Restarting = "new"; return in }(),
		want: RotationStep{Action: RotationRestart, Stale: []string{"instance_0"}, Stamp: "new",
			Message: "restarting the pods for the new certificate: instance_0 serve another certificate than the Secret's tls.crt"},
	}, {
		name: "once the chosen restart serves the content everywhere, it counts as reloaded",
		in:   func() RotationInput { in := rotationFixture(late, newLeaf, newLeaf); in.Restarting = "new"; return in }(),
		want: RotationStep{Stamp: "new", Record: "new"},
	}, {
		name: "a restart chosen for older content does not hold a reload of the new one",
		in:   func() RotationInput { in := rotationFixture(early, oldLeaf); in.Restarting = "old"; return in }(),
		want: RotationStep{Action: RotationReload, Member: "instance_0", Stale: []string{"instance_0"}, Stamp: "new",
			Message: "reloading the certificate of instance_0, one instance at a time: instance_0 serve another certificate than the Secret's tls.crt"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, PlanRotation(tt.in)); diff != "" {
				t.Errorf("PlanRotation (-want +got):\n%s", diff)
			}
		})
	}
}
