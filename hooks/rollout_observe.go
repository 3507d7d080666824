package hooks

import (
	"math"
	"strconv"

	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// revisionLabel is the label the StatefulSet controller puts on each pod it creates: the name of
// the ControllerRevision (the pod template) the pod was created from.
const revisionLabel = "controller-revision-hash"

// rolloutEvidence is what the request says about one role's rollout: its StatefulSet's
// revisions and generations, the pod-template hash the hook rendered into it last, and its pods.
type rolloutEvidence struct {
	set          planner.RolloutSet // Current and TemplateChanging are filled in by rolloutSet
	templateHash string
}

// rolloutSet completes the evidence with what the sync knows besides the request: the pods the
// set has or had (current), and the hash of the template the sync returns.
func (e rolloutEvidence) rolloutSet(current int32, desiredHash string) planner.RolloutSet {
	s := e.set
	s.Current = current
	s.TemplateChanging = s.Exists && e.templateHash != desiredHash
	s.Pods = append([]planner.RolloutPod(nil), e.set.Pods...)
	return s
}

// observeRollout reads, per role (coordinators first), the StatefulSet's metadata.generation,
// its AnnotationTemplateHash and AnnotationTemplateGeneration, status.observedGeneration,
// updateRevision and currentRevision, and
// for each of its pods the revision label, readiness, deletion, creationTimestamp and the
// memgraph container's image. Pods beyond a role's ceiling are ignored (observeWorkloads warns).
func observeRollout(req *syncRequest, cluster, namespace string) ([2]rolloutEvidence, error) {
	var out [2]rolloutEvidence
	rs := roles(cluster)
	sets, err := objectsOf(req.Children, statefulSetKey, "children")
	if err != nil {
		return out, err
	}
	for _, e := range sets {
		if ns := metaString(e.obj, "namespace"); ns != "" && ns != namespace {
			continue
		}
		for i, r := range rs {
			if metaString(e.obj, "name") == r.set {
				if out[i], err = setRevisions(e.obj, ""); err != nil {
					return out, e.named("children", statefulSetKey, err, func(path string) error {
						_, err := setRevisions(e.obj, path)
						return err
					})
				}
			}
		}
	}
	pods, err := req.podEntries()
	if err != nil {
		return out, err
	}
	for _, p := range pods {
		if ns := p.facts.namespace; ns != "" && ns != namespace {
			continue
		}
		for i, r := range rs {
			index, ok := podIndex(p.facts.name, r)
			if !ok {
				continue
			}
			pod, err := p.rolloutPod(index)
			if err != nil {
				return out, err
			}
			out[i].set.Pods = append(out[i].set.Pods, pod)
		}
	}
	return out, nil
}

func setRevisions(sts object, path string) (rolloutEvidence, error) {
	ev := rolloutEvidence{set: planner.RolloutSet{Exists: true}}
	meta, _ := sts["metadata"].(map[string]any) // objectsOf checked metadata.name
	status, err := objectAt(sts, "status", path)
	if err != nil {
		return ev, err
	}
	if ev.set.Generation, _, err = intAt(meta, "generation", path+".metadata", math.MaxInt64); err != nil {
		return ev, err
	}
	if ev.set.ObservedGeneration, _, err = intAt(status, "observedGeneration", path+".status", math.MaxInt64); err != nil {
		return ev, err
	}
	if ev.set.UpdateRevision, err = stringAt(status, "updateRevision", path+".status"); err != nil {
		return ev, err
	}
	if ev.set.CurrentRevision, err = stringAt(status, "currentRevision", path+".status"); err != nil {
		return ev, err
	}
	annotations, err := objectAt(meta, "annotations", path+".metadata")
	if err != nil {
		return ev, err
	}
	if ev.templateHash, err = stringAt(annotations, topology.AnnotationTemplateHash, path+".metadata.annotations"); err != nil {
		return ev, err
	}
	generation, err := stringAt(annotations, topology.AnnotationTemplateGeneration, path+".metadata.annotations")
	if err != nil {
		return ev, err
	}
	// The hook's own record; anything but a positive integer reads as unknown.
	if n, err := strconv.ParseInt(generation, 10, 64); err == nil && n > 0 {
		ev.set.TemplateGeneration = n
	}
	return ev, nil
}

// podIndex is a pod's index in its role's StatefulSet (ordinal minus the first ordinal), for a
// pod of that set within the role's ceiling.
func podIndex(pod string, r role) (int, bool) {
	n, ok := topology.PodOrdinal(r.set, pod)
	if !ok || n < r.first || n-r.first >= int(r.ceiling) {
		return 0, false
	}
	return n - r.first, true
}

// memgraphImage is the image of the pod's memgraph container, "" when it has none.
func memgraphImage(pod object, path string) (string, error) {
	spec, err := objectAt(pod, "spec", path)
	if err != nil {
		return "", err
	}
	containers, err := listAt(spec, "containers", path+".spec")
	if err != nil {
		return "", err
	}
	for i, c := range containers {
		cpath := indexPath(path, ".spec.containers", i)
		container, ok := c.(map[string]any)
		if !ok {
			return "", wrongType(cpath, "an object", c)
		}
		name, err := stringAt(container, "name", cpath)
		if err != nil {
			return "", err
		}
		if name == topology.ContainerName {
			return stringAt(container, "image", cpath)
		}
	}
	return "", nil
}
