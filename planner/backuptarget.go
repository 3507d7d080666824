package planner

import (
	"fmt"
	"strings"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// The roles a backup's instance is chosen in, as SHOW REPLICATION ROLE says them.
const (
	BackupOnMainRole    = "main"
	BackupOnReplicaRole = "replica"
)

// BackupChoice is the data instance a backup's snapshots are taken on, the role it holds, and
// why it was chosen.
type BackupChoice struct {
	Instance topology.DataInstance
	Role     string
	Reason   string
}

// ChooseBackupInstance chooses where a backup is taken, from the leader's view (o.Instances; with
// PreferReplica also o.Lag, the leader's SHOW REPLICATION LAG, and o.Replicas, the MAIN's SHOW
// REPLICAS). With v1alpha1.BackupPreferReplica it is the first declared Sync or StrictSync
// replica proven caught up with the MAIN as a handover target is — up, a replica, 0 transactions
// behind on every database of the MAIN by SHOW REPLICATION LAG and ready on each by the MAIN's
// SHOW REPLICAS — so that a backup costs the MAIN nothing; else, and with v1alpha1.BackupOnMain,
// the MAIN. Without a MAIN that is up it waits (ReasonNoMain).
func ChooseBackupInstance(d topology.Declared, target v1alpha1.BackupTarget, o Observed) (BackupChoice, Wait) {
	v := index(o)
	main := observeMain(v).name
	row, ok := v.data[main]
	ordinal, declared := topology.ParseDataInstanceName(main)
	switch {
	case main == "":
		return BackupChoice{}, Wait{ReasonNoMain, fmt.Sprintf("the leader %s names no MAIN", o.Leader)}
	case !ok || row.Health != memgraph.HealthUp:
		return BackupChoice{}, Wait{ReasonNoMain, fmt.Sprintf("the MAIN %s is %s", main, row.Health)}
	case !declared:
		return BackupChoice{}, Wait{ReasonNoMain, fmt.Sprintf("the MAIN %s is no data instance of the cluster", main)}
	}
	onMain := BackupChoice{Instance: dataInstance(d, ordinal, main), Role: BackupOnMainRole}
	if target == v1alpha1.BackupOnMain {
		onMain.Reason = fmt.Sprintf("spec.backup.target is Main: taken on the MAIN %s", main)
		return onMain, Wait{}
	}
	replica, why := caughtUpBackupReplica(d, v, main)
	if replica != nil {
		return BackupChoice{Instance: *replica, Role: BackupOnReplicaRole, Reason: fmt.Sprintf(
			"spec.backup.target is PreferReplica: %s is a %s replica proven caught up with the MAIN %s (SHOW REPLICATION LAG "+
				"0 behind and the MAIN's SHOW REPLICAS ready on every database)", replica.Name, modeName(replica.Mode), main)}, Wait{}
	}
	onMain.Reason = fmt.Sprintf("spec.backup.target is PreferReplica, but no Sync or StrictSync replica is proven caught up "+
		"with the MAIN %s (%s): taken on the MAIN", main, why)
	return onMain, Wait{}
}

// caughtUpBackupReplica is the first declared Sync or StrictSync replica proven caught up with
// main, or nil and why none is.
func caughtUpBackupReplica(d topology.Declared, v rowIndex, main string) (*topology.DataInstance, string) {
	databases, missing := mainDatabases(v, main)
	if missing != "" {
		return nil, missing
	}
	var why []string
	for i, di := range d.DataInstances {
		switch {
		case di.Name == main:
			continue
		case di.Mode == v1alpha1.ReplicationAsync:
			why = append(why, di.Name+" is an Async replica")
			continue
		}
		if reason := notCaughtUp(v, main, di.Name, databases); reason != "" {
			why = append(why, reason)
			continue
		}
		return &d.DataInstances[i], ""
	}
	if len(why) == 0 {
		return nil, "the cluster declares no other data instance"
	}
	return nil, strings.Join(why, "; ")
}

// dataInstance is the declared data instance at ordinal, or the identity the cluster's network
// gives it when it is not declared (a retiring one).
func dataInstance(d topology.Declared, ordinal int, name string) topology.DataInstance {
	for _, di := range d.DataInstances {
		if di.Name == name {
			return di
		}
	}
	return d.Network.DataInstance(ordinal)
}

func modeName(m v1alpha1.ReplicationMode) string {
	if m == "" {
		return string(v1alpha1.ReplicationSync)
	}
	return string(m)
}

// choose chooses the instance the backup is taken on: the leader's table found through
// discovery and, for spec.backup.target PreferReplica, the catch-up proofs of a handover (SHOW
// REPLICATION LAG on the leader, SHOW REPLICAS on the MAIN), then ChooseBackupInstance. These are
// the cluster pass's own reads (pass.chooseBackup), one a step of the backup's pass, answered
// from its record. A read that fails is a wait (NoMain), or a missing proof, which makes the MAIN
// the choice. ok is false while a read is pending.
func (w *backupWalk) choose() (choice BackupChoice, held Wait, ok bool) {
	c := w.in.Cluster
	d := c.Declare(c.Replicas())
	var reads []Result
	for {
		p := &pass{record: reads, d: d}
		choice, held, f := p.chooseBackup(c)
		if f != waiting {
			return choice, held, true
		}
		step, known := backupRead(p.pending)
		if !known {
			return BackupChoice{}, Wait{Reason: ReasonNoMain, Message: fmt.Sprintf("choosing the instance asked for %T, which a backup does not read", p.pending)}, true
		}
		got, ok := w.step(step)
		if !ok {
			return BackupChoice{}, Wait{}, false
		}
		reads = append(reads, Result{Rows: got.Instances, Lag: got.Lag, Replicas: got.Replicas, Err: got.QueryErr, Expired: got.Expired})
	}
}

// backupRead is the backup's step that performs the cluster pass's read s.
func backupRead(s Step) (BackupStep, bool) {
	r, ok := s.(Read)
	switch {
	case !ok:
		return nil, false
	case r.What == ReadInstances:
		return backupShowInstances{from: r.From, share: r.Share}, true
	case r.What == ReadLag:
		return backupShowLag{from: r.From}, true
	case r.What == ReadReplicas:
		return backupShowReplicas{from: r.From}, true
	}
	return nil, false
}

// chooseBackup is the choice on what p read so far.
func (p *pass) chooseBackup(c *topology.Cluster) (BackupChoice, Wait, flow) {
	view, why, f := p.leaderTable(c)
	switch {
	case f == waiting:
		return BackupChoice{}, Wait{}, waiting
	case why != "":
		return BackupChoice{}, Wait{Reason: ReasonNoMain, Message: why}, goOn
	}
	o := Observed{Instances: view.Instances, Leader: view.Leader}
	if c.BackupTarget() == v1alpha1.BackupPreferReplica {
		if f, _ := p.catchUp(view, &o); f == waiting {
			return BackupChoice{}, Wait{}, waiting
		}
	}
	choice, wait := ChooseBackupInstance(p.d, c.BackupTarget(), o)
	return choice, wait, goOn
}

// leaderTable is the leader's own table of c's coordinators, found through discovery; why says,
// as a controller that waits for it reports, why there is none.
func (p *pass) leaderTable(c *topology.Cluster) (view View, why string, f flow) {
	order := DiscoveryOrder(p.d)
	disc, f := p.discover(order, len(order))
	switch {
	case f == waiting:
		return View{}, "", waiting
	case !disc.Found():
		return View{}, fmt.Sprintf("no coordinator of cluster %s named a ready leader: %s", c.Name(), strings.Join(disc.Problems, "; ")), goOn
	}
	view, f, err := p.leaderView(disc.View)
	switch {
	case f == waiting:
		return View{}, "", waiting
	case err != nil:
		return View{}, fmt.Sprintf("the leader of cluster %s: %s", c.Name(), Explain(err)), goOn
	}
	return view, "", goOn
}
