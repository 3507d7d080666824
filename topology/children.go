package topology

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"

	kjson "sigs.k8s.io/json"
)

// DesiredChildren renders the cluster's children in a fixed order: StatefulSet <cluster>-coordinator,
// StatefulSet <cluster>-data, headless Service <cluster>-coordinator, headless Service
// <cluster>-data, client Service <cluster>, Services <cluster>-rw (selecting no pod until
// RenderMain points it at the MAIN) and <cluster>-ro (services.go), with spec.externalAccess a
// Service <pod>-external per declared member (externalaccess.go), PodDisruptionBudgets
// <cluster>-coordinator and <cluster>-data (budgets.go; the MAIN's budget is MainBudget, rendered
// once MAIN is known, followmain.go). Replica counts and rolling-update partitions are the
// caller's decision; they are rendered as given. The partition is always rendered, so that the
// stored StatefulSet never differs from what the hook returns (the API server would store 0).
//
// Each child is a JSON-ready map in the form the API server stores it: no nulls, no top-level
// status, no creationTimestamp, integers as int64. The cluster is admitted (defaulted and
// valid), so the children are objects Kubernetes and Memgraph accept.
func DesiredChildren(c *Cluster, replicas Replicas, partitions Partitions, generations TemplateGenerations) ([]map[string]any, error) {
	if c == nil || c.mc == nil {
		return nil, errors.New("no admitted MemgraphCluster to render")
	}
	if replicas.Coordinators < 0 || replicas.DataInstances < 0 {
		return nil, fmt.Errorf("replica counts must not be negative, got %d coordinators and %d data instances",
			replicas.Coordinators, replicas.DataInstances)
	}
	if partitions.Coordinators < 0 || partitions.DataInstances < 0 {
		return nil, fmt.Errorf("partitions must not be negative, got %d for the coordinators and %d for the data instances",
			partitions.Coordinators, partitions.DataInstances)
	}
	mc := c.mc
	coordinators, data := coordinatorStatefulSet(mc, c.network, replicas.Coordinators, partitions.Coordinators),
		dataStatefulSet(mc, c.agentImageOrDefault(), replicas.DataInstances, partitions.DataInstances)
	stampTemplates(c.restartStamp, coordinators, data)
	typed := []any{
		coordinators,
		data,
		coordinatorService(mc),
		dataService(mc),
		clientService(mc),
		writeService(mc, ""),
		readService(mc),
	}
	for _, svc := range externalServices(mc, c.network, c.replicas) {
		typed = append(typed, svc)
	}
	typed = append(typed,
		coordinatorBudget(mc),
		dataBudget(mc),
	)
	children := make([]map[string]any, 0, len(typed))
	for i, obj := range typed {
		m, err := toStoredForm(obj)
		if err != nil {
			return nil, err
		}
		if _, ok := obj.(*appsv1.StatefulSet); ok {
			generation := []int64{generations.Coordinators, generations.DataInstances}[i]
			if err := annotateTemplate(m, generation); err != nil {
				return nil, err
			}
		}
		children = append(children, m)
	}
	return children, nil
}

// PodTemplateHashes are the AnnotationTemplateHash values DesiredChildren puts on each role's
// StatefulSet: a sync compares them with the observed StatefulSets' to know whether the
// children it returns change a pod template (and so a revision the StatefulSet controller has
// not computed yet). Replicas and partitions are not part of the template.
func PodTemplateHashes(c *Cluster) (coordinators, data string, err error) {
	children, err := DesiredChildren(c, Replicas{}, Partitions{}, TemplateGenerations{})
	if err != nil {
		return "", "", err
	}
	return templateHashOf(children[0]), templateHashOf(children[1]), nil
}

func templateHashOf(sts map[string]any) string {
	meta, _ := sts["metadata"].(map[string]any)
	annotations, _ := meta["annotations"].(map[string]any)
	hash, _ := annotations[AnnotationTemplateHash].(string)
	return hash
}

// annotateTemplate sets AnnotationTemplateHash on a StatefulSet in stored form — the first 16
// hex digits of the SHA-256 of its pod template's JSON (encoding/json sorts map keys, so the same
// template always hashes alike) — and, when positive, AnnotationTemplateGeneration.
func annotateTemplate(sts map[string]any, generation int64) error {
	spec, _ := sts["spec"].(map[string]any)
	raw, err := json.Marshal(spec["template"])
	if err != nil {
		return fmt.Errorf("hash pod template: %w", err)
	}
	sum := sha256.Sum256(raw)
	meta, _ := sts["metadata"].(map[string]any)
	annotations, _ := meta["annotations"].(map[string]any)
	if annotations == nil {
		annotations = map[string]any{}
		meta["annotations"] = annotations
	}
	annotations[AnnotationTemplateHash] = hex.EncodeToString(sum[:8])
	if generation > 0 {
		annotations[AnnotationTemplateGeneration] = strconv.FormatInt(generation, 10)
	}
	return nil
}

// toStoredForm converts a typed object to a map and prunes what the typed structs marshal but the
// API server would not store or Metacontroller must not see: every JSON null (a desired null never
// matches an absent field, so Metacontroller would update forever), every creationTimestamp, and
// the top-level status.
func toStoredForm(obj any) (map[string]any, error) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("marshal child: %w", err)
	}
	var m map[string]any
	if err := kjson.UnmarshalCaseSensitivePreserveInts(raw, &m); err != nil {
		return nil, fmt.Errorf("unmarshal child: %w", err)
	}
	delete(m, "status")
	prune(m)
	return m, nil
}

func prune(v any) {
	switch t := v.(type) {
	case map[string]any:
		for k, child := range t {
			if child == nil || k == "creationTimestamp" {
				delete(t, k)
				continue
			}
			prune(child)
		}
	case []any:
		for _, child := range t {
			prune(child)
		}
	}
}
