package wire

import (
	kjson "sigs.k8s.io/json"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
)

const (
	ClusterKind    = "MemgraphCluster.memgraph.com/v1alpha1"
	BackupKind     = "MemgraphBackup.memgraph.com/v1alpha1"
	StatefulSetKey = "StatefulSet.apps/v1"
	ServiceKey     = "Service.v1"
	BudgetKey      = "PodDisruptionBudget.policy/v1"
	PodKey         = "Pod.v1"
	SecretKey      = "Secret.v1"
	NodeKey        = "Node.v1"
)

// RevisionLabel is the label the StatefulSet controller puts on each pod it creates: the name of
// the ControllerRevision (the pod template) the pod was created from.
const RevisionLabel = "controller-revision-hash"

// Object is what the hook reads of any child or related object — a StatefulSet, a Pod, a Secret,
// a Service, a PodDisruptionBudget, a Node, a MemgraphBackup — and nothing else, so that decoding skips the pod templates, pod specs and
// managedFields it never reads. A value of the wrong type is a bad request naming its JSON path
// (Locate, which decodes the lists as list to name an element's index); an absent (or null)
// field is absent.
type Object = objectOf[[]Container, []PodCondition, []Taint, []ContainerStatus, []ServicePort, []Ingress, []NodeAddress]

type objectOf[Containers, Conditions, Taints, Statuses, Ports, Ingresses, Addresses any] struct {
	Metadata ObjectMeta `json:"metadata"`
	Spec     struct {
		Replicas *int32 `json:"replicas"` // a StatefulSet's
		Ordinals struct {
			Start *int32 `json:"start"` // the data StatefulSet's hibernation window
		} `json:"ordinals"`
		Containers Containers `json:"containers"` // a Pod's
		NodeName   string     `json:"nodeName"`   // a Pod's
		Selector   struct {
			MatchLabels struct {
				PodName string `json:"statefulset.kubernetes.io/pod-name"` // topology.LabelPodName
			} `json:"matchLabels"`
		} `json:"selector"` // the MAIN's PodDisruptionBudget's
		Unschedulable bool   `json:"unschedulable"` // a Node's
		Taints        Taints `json:"taints"`        // a Node's
		Type          string `json:"type"`          // a Service's
		Ports         Ports  `json:"ports"`         // a Service's
		// A StatefulSet's: the stamps of its pod template (topology.TemplateStamps).
		Template struct {
			Metadata struct {
				Annotations struct {
					RestartedAt        string `json:"memgraph.com/restartedAt"`         // topology.AnnotationRestartedAt
					CertificateRestart string `json:"memgraph.com/certificate-restart"` // topology.AnnotationCertificateRestart
				} `json:"annotations"`
			} `json:"metadata"`
		} `json:"template"`
	} `json:"spec"`
	Status struct {
		Replicas           int32      `json:"replicas"`
		ReadyReplicas      int32      `json:"readyReplicas"`
		ObservedGeneration int64      `json:"observedGeneration"`
		UpdateRevision     string     `json:"updateRevision"`
		CurrentRevision    string     `json:"currentRevision"`
		Conditions         Conditions `json:"conditions"`
		// A Pod's: why a container waits (PodProblems).
		InitContainerStatuses Statuses `json:"initContainerStatuses"`
		ContainerStatuses     Statuses `json:"containerStatuses"`
		LoadBalancer          struct {
			Ingress Ingresses `json:"ingress"`
		} `json:"loadBalancer"` // a Service's
		Addresses Addresses `json:"addresses"` // a Node's
		// A MemgraphBackup's: what a restore by name reads of it (backupcontroller.ReadRestoreSource).
		// Phase is a Pod's too, which nothing reads; no other object's status has the fields of
		// *BackupStatus, which is nil but for a MemgraphBackup's.
		Phase Phase `json:"phase"`
		*BackupStatus
	} `json:"status"`
	Type string            `json:"type"` // a Secret's
	Data map[string]string `json:"data"` // a Secret's
}

type Container struct {
	Name  string   `json:"name"`
	Image string   `json:"image"`
	Args  []string `json:"args"` // a Pod's: whether it runs with intra-cluster TLS
}

// ServicePort is what the hook reads of a Service's port: which one it is and its node port.
type ServicePort struct {
	Name     string `json:"name"`
	NodePort int32  `json:"nodePort"`
}

// Ingress is one entry of a Service's status.loadBalancer.ingress.
type Ingress struct {
	IP       string `json:"ip"`
	Hostname string `json:"hostname"`
}

// NodeAddress is one entry of a Node's status.addresses.
type NodeAddress struct {
	Type    string `json:"type"`
	Address string `json:"address"`
}

// BackupStatus is what a restore by name reads of a MemgraphBackup's status besides its phase:
// the default database's object and size, the store it is in, and every database.
type BackupStatus struct {
	Key               string           `json:"key"`
	Bucket            string           `json:"bucket"`
	Endpoint          string           `json:"endpoint"`
	Size              int64            `json:"size"`
	SnapshotTimestamp int64            `json:"snapshotTimestamp"`
	Databases         []BackupDatabase `json:"databases"`
}

// Phase is a status.phase. The phases of a MemgraphBackup and of a Pod are kept without
// allocating a string per object; another string is kept as it is.
type Phase string

var knownPhases = []Phase{
	Phase(v1alpha1.BackupPending), Phase(v1alpha1.BackupRunning), Phase(v1alpha1.BackupCompleted), Phase(v1alpha1.BackupFailed),
	"Succeeded", "Unknown",
}

func (p *Phase) UnmarshalJSON(raw []byte) error {
	if len(raw) > 2 && raw[0] == '"' && raw[len(raw)-1] == '"' {
		for _, known := range knownPhases {
			if string(raw[1:len(raw)-1]) == string(known) {
				*p = known
				return nil
			}
		}
	}
	if string(raw) == "null" {
		return nil
	}
	return kjson.UnmarshalCaseSensitivePreserveInts(raw, (*string)(p))
}

// BackupDatabase is what a restore reads of one database of a MemgraphBackup's status.
type BackupDatabase struct {
	Name              string `json:"name"`
	Key               string `json:"key"`
	Size              int64  `json:"size"`
	SHA256            string `json:"sha256"`
	CRC32C            string `json:"crc32c"`
	SnapshotTimestamp int64  `json:"snapshotTimestamp"`
	Skipped           string `json:"skipped"`
}

type Taint struct {
	Key string `json:"key"`
}

type PodCondition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// ContainerStatus is what the hook reads of a Pod's container status: why it waits.
type ContainerStatus struct {
	Name  string `json:"name"`
	State struct {
		Waiting struct {
			Reason  string `json:"reason"`
			Message string `json:"message"`
		} `json:"waiting"`
	} `json:"state"`
	RestartCount int32 `json:"restartCount"`
}

type ObjectMeta struct {
	Name              string `json:"name"`
	Namespace         string `json:"namespace"`
	Generation        int64  `json:"generation"`
	CreationTimestamp string `json:"creationTimestamp"`
	DeletionTimestamp string `json:"deletionTimestamp"`
	Labels            struct {
		Revision string `json:"controller-revision-hash"` // RevisionLabel
	} `json:"labels"`
	Annotations struct {
		TemplateHash        string `json:"memgraph.com/pod-template-hash"`       // topology.AnnotationTemplateHash
		TemplateGeneration  string `json:"memgraph.com/pod-template-generation"` // topology.AnnotationTemplateGeneration
		CertificateRestart  string `json:"memgraph.com/certificate-restart"`     // topology.AnnotationCertificateRestart
		CertificateSeen     string `json:"memgraph.com/certificate-seen"`        // topology.AnnotationCertificateSeen
		CertificateReloaded string `json:"memgraph.com/certificate-reloaded"`    // topology.AnnotationCertificateReloaded
		SpecGeneration      string `json:"memgraph.com/spec-generation"`         // topology.AnnotationSpecGeneration
		HookRelease         string `json:"memgraph.com/hook-release"`            // topology.AnnotationHookRelease
		TemplateChange      string `json:"memgraph.com/template-change"`         // topology.AnnotationTemplateChange
		AgentImage          string `json:"memgraph.com/backup-agent-image"`      // topology.AnnotationAgentImage
		AgentProtocol       string `json:"memgraph.com/backup-agent-protocol"`   // topology.AnnotationAgentProtocol
	} `json:"annotations"`
}

// In reports whether the object names no namespace or namespace.
func (m *ObjectMeta) In(namespace string) bool { return m.Namespace == "" || m.Namespace == namespace }
