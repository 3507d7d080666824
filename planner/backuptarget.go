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

// BackupChosen ends the choice of the instance a backup is taken on: the choice, or why none is
// made yet (Wait).
type BackupChosen struct {
	Choice BackupChoice
	Wait   Wait
}

func (BackupChosen) isStep() {}

// NextBackupChoice is the next step of choosing the instance a backup of c is taken on, from
// what was read so far (done): the view discovery chooses, the leader's own table and, for
// spec.backup.target PreferReplica, the catch-up proofs of a handover (SHOW REPLICATION LAG on
// the leader, SHOW REPLICAS on the MAIN), then ChooseBackupInstance. A read that fails is a wait
// (NoMain), or a missing proof, which makes the MAIN the choice.
func NextBackupChoice(c *topology.Cluster, done []Result) Step {
	p := &pass{record: done, d: c.Declare(c.Replicas())}
	chosen, f := p.chooseBackup(c)
	if f == waiting {
		return p.pending
	}
	return chosen
}

func (p *pass) chooseBackup(c *topology.Cluster) (BackupChosen, flow) {
	view, why, f := p.leaderTable(c)
	switch {
	case f == waiting:
		return BackupChosen{}, waiting
	case why != "":
		return BackupChosen{Wait: Wait{Reason: ReasonNoMain, Message: why}}, goOn
	}
	o := Observed{Instances: view.Instances, Leader: view.Leader}
	if c.BackupTarget() == v1alpha1.BackupPreferReplica {
		if f, _ := p.catchUp(view, &o); f == waiting {
			return BackupChosen{}, waiting
		}
	}
	choice, wait := ChooseBackupInstance(p.d, c.BackupTarget(), o)
	return BackupChosen{Choice: choice, Wait: wait}, goOn
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
