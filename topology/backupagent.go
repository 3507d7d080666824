package topology

import (
	"encoding/base64"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// The backup agent: a sidecar of every data pod, running the hook's own image as
// `memgraph-hooks agent`, with the data volume mounted read-only. It serves HTTPS on
// BackupAgentPort and uploads a named snapshot of its instance to object storage when the hook
// asks (package backup). Its token and TLS pair come from the cluster's backup-agent Secret,
// which the hook generates once (BackupAgentSecretName).
const (
	BackupAgentContainer = "backup-agent"
	BackupAgentVolume    = "backup-agent"
	BackupAgentMountPath = "/etc/memgraph-hooks/backup-agent"

	// The backup-agent Secret's keys: the bearer token the agents accept, their serving pair,
	// and the CA the hook verifies them with.
	BackupAgentTokenKey = "token"
	BackupAgentCertKey  = "tls.crt"
	BackupAgentKeyKey   = "tls.key"
	BackupAgentCAKey    = "ca.crt"

	// DefaultAgentImage is the hook's own image, which the agent runs unless the hook is told
	// another (--agent-image).
	DefaultAgentImage = "memgraph-hooks:dev"
)

// The agent's image is pinned per cluster: the data StatefulSet records the image its sidecar
// runs and the version of the agent's API that image serves (AnnotationAgentImage,
// AnnotationAgentProtocol), and a new hook release with a new --agent-image leaves it as it is
// while the hook still speaks that version (planner.NextAgentPin), so that a release of the hook
// does not by itself restart every data pod.
const (
	// AgentProtocol is the version of the agent's API that this release's agent serves: 2 is
	// the jobs API (PUT and GET /v1/jobs/{id}: backups and restores run by the agent beside
	// Memgraph). Version 1 is the uploads API of v0.1.0 (PUT and GET /v1/uploads/{id}), whose
	// agent only uploads a snapshot the hook has Memgraph write over Bolt.
	AgentProtocol = 2
	// OldestAgentProtocol is the oldest version of the agent's API the hook speaks. Version 1
	// is not spoken: its backups need the hook to run CREATE SNAPSHOT, whose duration grows with
	// the data, inside a sync.
	OldestAgentProtocol = 2

	AnnotationAgentImage    = "memgraph.com/backup-agent-image"
	AnnotationAgentProtocol = "memgraph.com/backup-agent-protocol"
)

// AgentPin is the backup agent's image a cluster's data pods run and the version of the
// agent's API it serves (0: unknown, an earlier release rendered it).
// +kubebuilder:object:generate=false
type AgentPin struct {
	Image    string
	Protocol int
}

// ReadAgentPin reads the pin from the data StatefulSet's annotations as observed; a protocol that
// is not a positive integer reads as unknown.
func ReadAgentPin(image, protocol string) AgentPin {
	p := AgentPin{Image: image}
	if n, err := strconv.Atoi(protocol); err == nil && n > 0 {
		p.Protocol = n
	}
	return p
}

// BackupAgentSecretName is the cluster's backup-agent Secret, a child the hook generates.
func BackupAgentSecretName(cluster string) string { return cluster + "-backup-agent" }

// BackupAgentDNSNames are the names the agents' certificate covers: every data pod of the
// cluster, present and future (a wildcard under the data StatefulSet's governing Service).
func (n Network) BackupAgentDNSNames() []string {
	return []string{fmt.Sprintf("*.%s.%s.svc.%s", DataSetName(n.Cluster), n.Namespace, n.ClusterDomain)}
}

// BackupAgentAddress is the agent's host:port in the data pod at ordinal.
func (n Network) BackupAgentAddress(ordinal int) string {
	return hostPort(n.DataInstance(ordinal).Host, BackupAgentPort)
}

// WithAgentImage returns a copy of the cluster whose data pods run the backup agent from image
// ("" keeps DefaultAgentImage).
func (c *Cluster) WithAgentImage(image string) *Cluster {
	out := *c
	out.agentImage = image
	return &out
}

func (c *Cluster) agentImageOrDefault() string {
	if c.agentImage == "" {
		return DefaultAgentImage
	}
	return c.agentImage
}

// withBackupAgent adds the agent's container and its Secret volume to a data pod.
func withBackupAgent(p corev1.PodSpec, cluster, image string) corev1.PodSpec {
	file := func(key string) string { return BackupAgentMountPath + "/" + key }
	p.Containers = append(p.Containers, corev1.Container{
		Name:            BackupAgentContainer,
		Image:           image,
		ImagePullPolicy: corev1.PullIfNotPresent,
		Args: []string{
			"agent",
			"--listen=:" + strconv.Itoa(int(BackupAgentPort)),
			"--snapshot-dir=" + SnapshotDirectory,
			"--tls-cert-file=" + file(BackupAgentCertKey),
			"--tls-key-file=" + file(BackupAgentKeyKey),
			"--auth-token-file=" + file(BackupAgentTokenKey),
		},
		Ports: []corev1.ContainerPort{containerPort(PortNameBackupAgent, BackupAgentPort)},
		VolumeMounts: []corev1.VolumeMount{
			{Name: LibVolume, MountPath: LibMountPath, ReadOnly: true},
			{Name: BackupAgentVolume, MountPath: BackupAgentMountPath, ReadOnly: true},
		},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("32Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")},
		},
		SecurityContext:          containerSecurityContext(),
		TerminationMessagePath:   corev1.TerminationMessagePathDefault,
		TerminationMessagePolicy: corev1.TerminationMessageReadFile,
	})
	p.Volumes = append(p.Volumes, corev1.Volume{Name: BackupAgentVolume, VolumeSource: corev1.VolumeSource{
		Secret: &corev1.SecretVolumeSource{
			SecretName: BackupAgentSecretName(cluster),
			Items: []corev1.KeyToPath{
				{Key: BackupAgentTokenKey, Path: BackupAgentTokenKey},
				{Key: BackupAgentCertKey, Path: BackupAgentCertKey},
				{Key: BackupAgentKeyKey, Path: BackupAgentKeyKey},
			},
			DefaultMode: ptr.To(boltTLSMode),
		},
	}})
	return p
}

// BackupAgentSecretKeys are the keys the backup-agent Secret must hold.
var BackupAgentSecretKeys = []string{BackupAgentTokenKey, BackupAgentCertKey, BackupAgentKeyKey, BackupAgentCAKey}

// BackupAgentSecretComplete reports whether observed Secret data (base64 values, as the API
// returns them) holds every key, each non-empty and decodable: such a Secret is returned as it
// is; any other is generated anew.
func BackupAgentSecretComplete(data map[string]string) bool {
	for _, k := range BackupAgentSecretKeys {
		v, err := base64.StdEncoding.DecodeString(data[k])
		if err != nil || len(v) == 0 {
			return false
		}
	}
	return true
}

// BackupAgentSecret is the cluster's backup-agent Secret child in stored form, holding data
// (base64 values) and annotations exactly: the hook generates the agents' data once and returns
// what it observes after, beside what it copies for the cluster's backups.
func BackupAgentSecret(c *Cluster, data, annotations map[string]string) (map[string]any, error) {
	mc := c.mc
	return opaqueSecret(metav1.ObjectMeta{Name: BackupAgentSecretName(mc.Name), Namespace: mc.Namespace,
		Labels: roleLabels(mc.Name, RoleData, mc.Spec.DataTemplate.Labels), Annotations: annotations}, data)
}

// opaqueSecret is an Opaque Secret child in stored form with meta and data (base64 values, as
// the API server stores them), rendered typed: each value decoded into the Secret.
func opaqueSecret(meta metav1.ObjectMeta, data map[string]string) (map[string]any, error) {
	decoded := make(map[string][]byte, len(data))
	for k, v := range data {
		raw, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			return nil, fmt.Errorf("Secret %s key %s: not base64: %w", meta.Name, k, err)
		}
		decoded[k] = raw
	}
	return toStoredForm(&corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}, ObjectMeta: meta,
		Type: corev1.SecretTypeOpaque, Data: decoded})
}
