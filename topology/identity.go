package topology

import (
	"fmt"
	"strconv"
	"strings"
)

// Identity of every member of a cluster, derived in one place so that what the pods advertise
// (their flags and environment) and what the hook registers over Bolt can never drift apart.
//
// Invariants:
//   - The coordinator StatefulSet starts its ordinals at FirstCoordinatorID, so a coordinator's
//     pod-index label equals its Raft id and its pod is <cluster>-coordinator-<id>.
//   - The data StatefulSet starts at FirstDataOrdinal; its pod <cluster>-data-<n> registers as
//     instance_<n>.
//   - Every advertised address is <pod>.<governing service>.<namespace>.svc.<clusterDomain>:<port>,
//     stored un-resolved by Memgraph exactly as we send it.

const (
	FirstCoordinatorID = 1
	FirstDataOrdinal   = 0

	coordinatorNamePrefix = "coordinator_"
	dataNamePrefix        = "instance_"
)

// Ports are the four ports registration depends on.
type Ports struct {
	Bolt        int32
	Management  int32
	Replication int32
	Coordinator int32
}

// Network is everything needed to name and address the members of one cluster.
type Network struct {
	Cluster       string
	Namespace     string
	ClusterDomain string
	Ports         Ports
}

// Coordinator is the declared identity of one coordinator.
type Coordinator struct {
	ID                int
	Name              string // coordinator_<id>, as SHOW INSTANCES names it
	Pod               string
	Host              string // the pod's FQDN, its --coordinator-hostname
	BoltServer        string
	CoordinatorServer string
	ManagementServer  string
}

// DataInstance is the declared identity of one data instance.
type DataInstance struct {
	Ordinal           int
	Name              string // instance_<ordinal>
	Pod               string
	Host              string
	BoltServer        string
	ManagementServer  string
	ReplicationServer string
}

// Replicas are StatefulSet replica counts per role.
type Replicas struct {
	Coordinators  int32
	DataInstances int32
}

// Partitions are the StatefulSets' spec.updateStrategy.rollingUpdate.partition per role. The
// StatefulSet controller replaces (and creates at the new revision) only the pods whose index —
// ordinal minus the set's first ordinal — is at or above the partition, highest first; a pod
// below it is recreated at the old revision. So with the coordinators' ordinals starting at
// FirstCoordinatorID, a partition of P releases coordinator ids greater than P, and a partition
// equal to the replica count holds every pod.
type Partitions struct {
	Coordinators  int32
	DataInstances int32
}

// Declared is the topology the spec asks for plus the members a shrink is retiring: the ordinals
// in [declared, current) of each role, where current is the observed StatefulSet's spec.replicas.
type Declared struct {
	Network               Network
	Coordinators          []Coordinator  // ids FirstCoordinatorID .. FirstCoordinatorID+n-1
	DataInstances         []DataInstance // ordinals FirstDataOrdinal .. FirstDataOrdinal+m-1
	RetiringCoordinators  []Coordinator  // ascending id
	RetiringDataInstances []DataInstance // ascending ordinal
}

func CoordinatorSetName(cluster string) string { return cluster + "-coordinator" }
func DataSetName(cluster string) string        { return cluster + "-data" }

func CoordinatorName(id int) string       { return coordinatorNamePrefix + strconv.Itoa(id) }
func DataInstanceName(ordinal int) string { return dataNamePrefix + strconv.Itoa(ordinal) }

// ParseCoordinatorName returns the id of a coordinator_<id> name.
func ParseCoordinatorName(name string) (int, bool) { return parseSuffix(name, coordinatorNamePrefix) }

// ParseDataInstanceName returns the ordinal of an instance_<ordinal> name.
func ParseDataInstanceName(name string) (int, bool) { return parseSuffix(name, dataNamePrefix) }

func parseSuffix(name, prefix string) (int, bool) {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok || rest == "" || (len(rest) > 1 && rest[0] == '0') {
		return 0, false
	}
	// Digits only: strconv.Atoi would also take "+1", a name we never give a member.
	if strings.TrimLeft(rest, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}

func (n Network) fqdn(set, pod string) string {
	return fmt.Sprintf("%s.%s.%s.svc.%s", pod, set, n.Namespace, n.ClusterDomain)
}

func hostPort(host string, port int32) string { return host + ":" + strconv.Itoa(int(port)) }

// Coordinator returns the identity of coordinator <id>.
func (n Network) Coordinator(id int) Coordinator {
	set := CoordinatorSetName(n.Cluster)
	pod := fmt.Sprintf("%s-%d", set, id)
	host := n.fqdn(set, pod)
	return Coordinator{
		ID:                id,
		Name:              CoordinatorName(id),
		Pod:               pod,
		Host:              host,
		BoltServer:        hostPort(host, n.Ports.Bolt),
		CoordinatorServer: hostPort(host, n.Ports.Coordinator),
		ManagementServer:  hostPort(host, n.Ports.Management),
	}
}

// DataInstance returns the identity of the data instance at <ordinal>.
func (n Network) DataInstance(ordinal int) DataInstance {
	set := DataSetName(n.Cluster)
	pod := fmt.Sprintf("%s-%d", set, ordinal)
	host := n.fqdn(set, pod)
	return DataInstance{
		Ordinal:           ordinal,
		Name:              DataInstanceName(ordinal),
		Pod:               pod,
		Host:              host,
		BoltServer:        hostPort(host, n.Ports.Bolt),
		ManagementServer:  hostPort(host, n.Ports.Management),
		ReplicationServer: hostPort(host, n.Ports.Replication),
	}
}

// Declare lists the declared members of each role and the retiring ones: those whose ordinals
// lie in [declared, current). A current count at or below the declared one retires nothing.
func Declare(n Network, declared, current Replicas) Declared {
	d := Declared{Network: n}
	for i := 0; i < int(declared.Coordinators); i++ {
		d.Coordinators = append(d.Coordinators, n.Coordinator(FirstCoordinatorID+i))
	}
	for i := int(declared.Coordinators); i < int(current.Coordinators); i++ {
		d.RetiringCoordinators = append(d.RetiringCoordinators, n.Coordinator(FirstCoordinatorID+i))
	}
	for i := 0; i < int(declared.DataInstances); i++ {
		d.DataInstances = append(d.DataInstances, n.DataInstance(FirstDataOrdinal+i))
	}
	for i := int(declared.DataInstances); i < int(current.DataInstances); i++ {
		d.RetiringDataInstances = append(d.RetiringDataInstances, n.DataInstance(FirstDataOrdinal+i))
	}
	return d
}
