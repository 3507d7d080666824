package topology

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
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

// Member is the identity every member has, whatever its role.
type Member struct {
	Ordinal          int    // the pod's ordinal; a coordinator's Raft id
	Name             string // coordinator_<id> or instance_<ordinal>, as SHOW INSTANCES names it
	Pod              string
	Host             string // the pod's FQDN; a coordinator's --coordinator-hostname
	BoltServer       string // in-cluster: what the hook dials, and advertises without Advertised
	ManagementServer string
	// Advertised is the bolt_server clients are to be given when it is not BoltServer: the
	// member's external address (spec.externalAccess, Cluster.Advertise); "" otherwise.
	Advertised string
}

// AdvertisedBoltServer is the bolt_server the member is to be registered with: Advertised, or
// BoltServer without it.
func (m Member) AdvertisedBoltServer() string {
	if m.Advertised != "" {
		return m.Advertised
	}
	return m.BoltServer
}

// Core returns the role-independent identity.
func (m Member) Core() Member { return m }

// Coordinator is the declared identity of one coordinator.
type Coordinator struct {
	Member
	CoordinatorServer string
}

// ID is the coordinator's Raft id, its pod's ordinal.
func (c Coordinator) ID() int { return c.Ordinal }

// UniqueEndpoint is the endpoint no other registration can share (Memgraph refuses a second
// coordinator with the same coordinator_server), so a row carrying it is this member.
func (c Coordinator) UniqueEndpoint() string { return c.CoordinatorServer }

// DataInstance is the declared identity of one data instance.
type DataInstance struct {
	Member
	ReplicationServer string
	// Mode is the declared replication mode it is registered with; "" reads as Sync.
	Mode v1alpha1.ReplicationMode
}

// UniqueEndpoint is the endpoint no other registration can share (Memgraph refuses a second
// instance with the same management_server), so a row carrying it is this member.
func (d DataInstance) UniqueEndpoint() string { return d.ManagementServer }

// Role is a kind of member, for the helpers both roles share.
// +kubebuilder:object:generate=false
type Role interface {
	Coordinator | DataInstance
	Core() Member
	UniqueEndpoint() string
}

// Names lists the members' names, in the given order.
func Names[M Role](members []M) []string {
	var names []string
	for _, m := range members {
		names = append(names, m.Core().Name)
	}
	return names
}

// Find returns the member called name.
func Find[M Role](members []M, name string) (M, bool) {
	for _, m := range members {
		if m.Core().Name == name {
			return m, true
		}
	}
	var none M
	return none, false
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

// TemplateGenerations are, per role, the StatefulSet's metadata.generation with which its current
// pod template arrived (AnnotationTemplateGeneration). Until status.observedGeneration reaches
// it, status.updateRevision may describe the previous template.
// +kubebuilder:object:generate=false
type TemplateGenerations struct {
	Coordinators  int64
	DataInstances int64
}

// Declared is the topology the spec asks for plus the members a shrink is retiring: the ordinals
// in [declared, span) of each role, where span is how many ordinals may hold a member (the observed StatefulSet's spec.replicas, raised by the hook to what else it observed).
type Declared struct {
	Network               Network
	Coordinators          []Coordinator  // ids FirstCoordinatorID .. FirstCoordinatorID+n-1
	DataInstances         []DataInstance // ordinals FirstDataOrdinal .. FirstDataOrdinal+m-1
	RetiringCoordinators  []Coordinator  // ascending id
	RetiringDataInstances []DataInstance // ascending ordinal
	// PreferredMain is spec.preferredMain: a declared data instance's name, or "".
	PreferredMain string
	// Settings are spec.coordinatorSettings: the coordinator settings kept as declared.
	Settings v1alpha1.CoordinatorSettings
	// WithheldSettings are the declared settings the hook never sends, each with why: values
	// Memgraph takes but cannot run with, in a spec admitted without the CRD's rule against them
	// (AdmitWithholding). Settings leaves them out.
	WithheldSettings []v1alpha1.Violation
	// RestoreHeld, when set, says why no data instance may be registered yet: the cluster
	// restores spec.bootstrap.fromBackup into its first MAIN before anything else.
	RestoreHeld string
	// External is where each declared member is reached from outside the Kubernetes cluster
	// (spec.externalAccess, Cluster.Advertise); nil without it.
	External *ExternalAccessView
	// Rebuild is AnnotationRebuild's value: the data instance to unregister and hold
	// unregistered while its volume is replaced ("" when none). Not checked: the planner says what
	// a value that names no declared data instance means.
	Rebuild string
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
	if !ok {
		return 0, false
	}
	n, ok := ParseOrdinal(rest)
	if !ok || n == math.MaxInt {
		return 0, false
	}
	return n, true
}

// PodOrdinal reads the ordinal of a pod of StatefulSet set, named <set>-<ordinal>; ok is false
// for any other name. An ordinal beyond int's range reads as math.MaxInt (see ParseOrdinal).
func PodOrdinal(set, pod string) (int, bool) {
	rest, ok := strings.CutPrefix(pod, set+"-")
	if !ok {
		return 0, false
	}
	return ParseOrdinal(rest)
}

// ParseOrdinal reads an ordinal the way StatefulSets and member names write it: decimal digits
// only, without a sign or a leading zero (strconv.Atoi would also take "+1" and "01", names
// nobody gives a member). A well-formed number beyond int's range reads as math.MaxInt, beyond
// any ceiling, so that a caller can tell it from a name that is no ordinal at all.
func ParseOrdinal(s string) (int, bool) {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" || len(s) > 1 && s[0] == '0' {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return math.MaxInt, true
	}
	return n, true
}

func (n Network) fqdn(set, pod string) string {
	return fmt.Sprintf("%s.%s.%s.svc.%s", pod, set, n.Namespace, n.ClusterDomain)
}

func hostPort(host string, port int32) string { return host + ":" + strconv.Itoa(int(port)) }

// Coordinator returns the identity of coordinator <id>.
func (n Network) Coordinator(id int) Coordinator {
	m := n.member(CoordinatorSetName(n.Cluster), CoordinatorName(id), id)
	return Coordinator{Member: m, CoordinatorServer: hostPort(m.Host, n.Ports.Coordinator)}
}

// DataInstance returns the identity of the data instance at <ordinal>.
func (n Network) DataInstance(ordinal int) DataInstance {
	m := n.member(DataSetName(n.Cluster), DataInstanceName(ordinal), ordinal)
	return DataInstance{Member: m, ReplicationServer: hostPort(m.Host, n.Ports.Replication)}
}

// member is what every member's identity holds: its pod of StatefulSet set at ordinal, the
// pod's FQDN, and the Bolt and management servers on it.
func (n Network) member(set, name string, ordinal int) Member {
	pod := fmt.Sprintf("%s-%d", set, ordinal)
	host := n.fqdn(set, pod)
	return Member{
		Ordinal:          ordinal,
		Name:             name,
		Pod:              pod,
		Host:             host,
		BoltServer:       hostPort(host, n.Ports.Bolt),
		ManagementServer: hostPort(host, n.Ports.Management),
	}
}

// Declare lists the declared members of each role and the retiring ones: those whose ordinals
// lie in [declared, span). A span at or below the declared one retires nothing.
func Declare(n Network, declared, span Replicas) Declared {
	d := Declared{Network: n}
	for i := 0; i < int(declared.Coordinators); i++ {
		d.Coordinators = append(d.Coordinators, n.Coordinator(FirstCoordinatorID+i))
	}
	for i := int(declared.Coordinators); i < int(span.Coordinators); i++ {
		d.RetiringCoordinators = append(d.RetiringCoordinators, n.Coordinator(FirstCoordinatorID+i))
	}
	for i := 0; i < int(declared.DataInstances); i++ {
		d.DataInstances = append(d.DataInstances, n.DataInstance(FirstDataOrdinal+i))
	}
	for i := int(declared.DataInstances); i < int(span.DataInstances); i++ {
		d.RetiringDataInstances = append(d.RetiringDataInstances, n.DataInstance(FirstDataOrdinal+i))
	}
	return d
}

// PodNames are the declared members' pods, coordinators' and data instances', each in order.
func (d Declared) PodNames() (coordinators, data []string) {
	for _, c := range d.Coordinators {
		coordinators = append(coordinators, c.Pod)
	}
	for _, di := range d.DataInstances {
		data = append(data, di.Pod)
	}
	return coordinators, data
}

// DataPod is the pod of the declared or retiring data instance name.
func (d Declared) DataPod(name string) (string, bool) {
	for _, list := range [][]DataInstance{d.DataInstances, d.RetiringDataInstances} {
		for _, di := range list {
			if di.Name == name {
				return di.Pod, true
			}
		}
	}
	return "", false
}
