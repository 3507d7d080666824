package topology

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Rendering is what a pass decides about the cluster's children besides its spec.
//
// +kubebuilder:object:generate=false
type Rendering struct {
	// Replicas and Partitions are the StatefulSets' replica counts and rolling-update partitions,
	// rendered as given; Generations the pod templates' AnnotationTemplateGeneration (0: none).
	Replicas    Replicas
	Partitions  Partitions
	Generations TemplateGenerations
	// Window is the data StatefulSet's spec.ordinals.start while the cluster hibernates or wakes
	// (hibernation.go); nil for none.
	Window *int32
	// MainPod is the MAIN's pod, which <cluster>-main protects and <cluster>-rw selects ("" while
	// no MAIN is known); HeldPod the pod the observed <cluster>-main selects, which <cluster>-data
	// leaves out ("" for none; budgets.go).
	MainPod, HeldPod string
	// Restart is both pod templates' AnnotationCertificateRestart ("" for none), Record the
	// certificate rotation's record on both StatefulSets (rotation.go).
	Restart string
	Record  CertificateRecord
	// Records are what each StatefulSet records of its pod template (record.go), coordinators
	// first; Agent the backup agent's pin: the image the data pods' template runs (its default
	// without one) and, with an image, its record on the data StatefulSet (backupagent.go).
	Records [2]TemplateRecord
	Agent   AgentPin
}

// Render renders the cluster's children for r in a fixed order: StatefulSet
// <cluster>-coordinator, StatefulSet <cluster>-data, headless Service <cluster>-coordinator,
// headless Service <cluster>-data, client Service <cluster>, Services <cluster>-rw (selecting
// the MAIN's pod, or none) and <cluster>-ro (services.go), with spec.externalAccess a Service
// <pod>-external per declared member (externalaccess.go), PodDisruptionBudgets
// <cluster>-coordinator and <cluster>-data (budgets.go), and <cluster>-main once the MAIN is
// known. The partition is always rendered, so that the stored StatefulSet never differs from what
// the hook returns (the API server would store 0).
//
// Each child is built typed, with everything r asks for, and converted once into a JSON-ready
// map in the form the API server stores it: no nulls, no top-level status, no creationTimestamp,
// integers as int64. The cluster is admitted (defaulted and valid), so the children are objects
// Kubernetes and Memgraph accept.
func Render(c *Cluster, r Rendering) ([]map[string]any, error) {
	typed, err := c.children(r)
	if err != nil {
		return nil, err
	}
	children := make([]map[string]any, 0, len(typed))
	for _, obj := range typed {
		m, err := toStoredForm(obj)
		if err != nil {
			return nil, err
		}
		children = append(children, m)
	}
	return children, nil
}

// children are the cluster's children for r, typed. Two of them follow the MAIN: the
// PodDisruptionBudget <cluster>-main (budgets.go) and the Service <cluster>-rw (services.go).
// Both select the MAIN's pod by LabelPodName and both are rendered from the one pod the hook knows
// to be MAIN, so the pass that hands MAIN over, or observes a failover, moves both at once;
// <cluster>-data follows the MAIN's budget one pass later (budgets.go says why).
func (c *Cluster) children(r Rendering) ([]any, error) {
	if c == nil || c.mc == nil {
		return nil, errors.New("no admitted MemgraphCluster to render")
	}
	if r.Replicas.Coordinators < 0 || r.Replicas.DataInstances < 0 {
		return nil, fmt.Errorf("replica counts must not be negative, got %d coordinators and %d data instances",
			r.Replicas.Coordinators, r.Replicas.DataInstances)
	}
	if r.Partitions.Coordinators < 0 || r.Partitions.DataInstances < 0 {
		return nil, fmt.Errorf("partitions must not be negative, got %d for the coordinators and %d for the data instances",
			r.Partitions.Coordinators, r.Partitions.DataInstances)
	}
	mc := c.mc
	if r.MainPod != "" {
		if _, ok := PodOrdinal(DataSetName(mc.Name), r.MainPod); !ok {
			return nil, fmt.Errorf("the MAIN's pod %q is not a data pod of cluster %s (%s-<ordinal>)",
				v1alpha1.Clip(r.MainPod), mc.Name, DataSetName(mc.Name))
		}
	}
	coordinators, data := c.statefulSets(r.Replicas, r.Partitions, r.Restart, r.Agent.Image)
	for i, sts := range []*appsv1.StatefulSet{coordinators, data} {
		if err := annotateTemplate(sts, []int64{r.Generations.Coordinators, r.Generations.DataInstances}[i]); err != nil {
			return nil, err
		}
		recordCertificate(sts, r.Record)
		recordTemplate(sts, r.Records[i])
		hibernationShape(c, sts, r.Window)
	}
	pinAgent(data, r.Agent)
	children := []any{
		coordinators,
		data,
		coordinatorService(mc),
		dataService(mc),
		clientService(mc),
		writeService(mc, r.MainPod),
		readService(mc),
	}
	for _, svc := range externalServices(mc, c.network, c.replicas) {
		children = append(children, svc)
	}
	children = append(children, coordinatorBudget(mc), dataBudgetBeside(mc, r.HeldPod))
	if r.MainPod != "" {
		children = append(children, mainBudget(mc, r.MainPod))
	}
	return children, nil
}

// statefulSets are the two StatefulSets at replicas and partitions, their pod templates stamped
// with the certificate restart, the data pods running the backup agent from agentImage (the
// cluster's own without one).
func (c *Cluster) statefulSets(replicas Replicas, partitions Partitions, restart, agentImage string) (coordinators, data *appsv1.StatefulSet) {
	if agentImage == "" {
		agentImage = c.agentImageOrDefault()
	}
	coordinators = coordinatorStatefulSet(c.mc, c.network, replicas.Coordinators, partitions.Coordinators)
	data = dataStatefulSet(c.mc, agentImage, replicas.DataInstances, partitions.DataInstances)
	stampTemplates(restart, coordinators, data)
	return coordinators, data
}

// PodTemplateHashes are the AnnotationTemplateHash values Render puts on each role's
// StatefulSet with the certificate restart stamp restart: a sync compares them with the observed
// StatefulSets' to know whether the children it returns change a pod template (and so a
// revision the StatefulSet controller has not computed yet), with the data pods running the
// backup agent from agentImage (as Rendering.Agent.Image). Only the two pod templates are
// rendered; replicas and partitions are not part of them.
func PodTemplateHashes(c *Cluster, restart, agentImage string) (coordinators, data string, err error) {
	if c == nil || c.mc == nil {
		return "", "", errors.New("no admitted MemgraphCluster to render")
	}
	cs, ds := c.statefulSets(Replicas{}, Partitions{}, restart, agentImage)
	if coordinators, err = templateHash(cs); err != nil {
		return "", "", err
	}
	data, err = templateHash(ds)
	return coordinators, data, err
}

// templateHash is the first 16 hex digits of the SHA-256 of sts's pod template's JSON in stored
// form (encoding/json sorts map keys, so the same template always hashes alike).
func templateHash(sts *appsv1.StatefulSet) (string, error) {
	template, err := toStoredForm(&sts.Spec.Template)
	if err != nil {
		return "", err
	}
	raw, err := json.Marshal(template)
	if err != nil {
		return "", fmt.Errorf("hash pod template: %w", err)
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:8]), nil
}

// annotateTemplate puts AnnotationTemplateHash on sts and, when positive,
// AnnotationTemplateGeneration.
func annotateTemplate(sts *appsv1.StatefulSet, generation int64) error {
	hash, err := templateHash(sts)
	if err != nil {
		return err
	}
	setAnnotation(&sts.ObjectMeta, AnnotationTemplateHash, hash)
	if generation > 0 {
		setAnnotation(&sts.ObjectMeta, AnnotationTemplateGeneration, strconv.FormatInt(generation, 10))
	}
	return nil
}

func setAnnotation(meta *metav1.ObjectMeta, key, value string) {
	if meta.Annotations == nil {
		meta.Annotations = map[string]string{}
	}
	meta.Annotations[key] = value
}
