package hooks

import (
	"cmp"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/planner"
)

// podFacts is everything the readers read of one Pod: its identity, readiness (podReady) and
// what the rollout reads (rolloutFields).
type podFacts struct {
	name, namespace string
	ready           bool // condition Ready=True and not being deleted
	terminating     bool
	revision        string // the controller-revision-hash label
	created         metav1.Time
	image           string // the memgraph container's, "" without one
}

// podEntry is one Pod of a request. A scanned request's Pods are well formed (the scan gives up
// on anything else), so only a generically decoded one carries errors, found without a path;
// the readers raise them where they always did, naming the path then (entry.named).
type podEntry struct {
	entry      // the object is nil when the Pod was scanned
	facts      podFacts
	readyErr   error // podReady's
	rolloutErr error // rolloutFields'
}

// podEntries are the request's Pods by key, read once for both readers.
func (req *syncRequest) podEntries() ([]podEntry, error) {
	if req.pods != nil || req.podsRead {
		return req.pods, nil
	}
	entries, err := objectsOf(req.Related, podKey, "related")
	if err != nil {
		return nil, err
	}
	pods := make([]podEntry, 0, len(entries))
	for _, e := range entries {
		p := podEntry{entry: e, facts: podFacts{name: metaString(e.obj, "name"), namespace: metaString(e.obj, "namespace")}}
		p.facts.ready, p.readyErr = podReady(e.obj, "")
		p.rolloutErr = rolloutFields(e.obj, "", &p.facts)
		pods = append(pods, p)
	}
	req.pods, req.podsRead = pods, true
	return pods, nil
}

// readyError is the Pod's readiness error, named.
func (p podEntry) readyError() error {
	return p.named("related", podKey, p.readyErr, func(path string) error {
		_, err := podReady(p.obj, path)
		return err
	})
}

// rolloutPod is what the rollout reads of the Pod at index in its set, or the first error
// reading it, named.
func (p podEntry) rolloutPod(index int) (planner.RolloutPod, error) {
	if unnamed := cmp.Or(p.readyErr, p.rolloutErr); unnamed != nil {
		return planner.RolloutPod{}, p.named("related", podKey, unnamed, func(path string) error {
			if _, err := podReady(p.obj, path); err != nil {
				return err
			}
			return rolloutFields(p.obj, path, &podFacts{})
		})
	}
	f := p.facts
	return planner.RolloutPod{Index: index, Ready: f.ready, Terminating: f.terminating, Revision: f.revision,
		Created: f.created, Image: f.image}, nil
}

// rolloutFields reads a Pod's deletion, revision label, creationTimestamp and memgraph image
// into f.
func rolloutFields(pod object, path string, f *podFacts) error {
	meta, _ := pod["metadata"].(map[string]any) // objectsOf checked metadata.name
	deleting, err := stringAt(meta, "deletionTimestamp", path+".metadata")
	if err != nil {
		return err
	}
	f.terminating = deleting != ""
	labels, err := objectAt(meta, "labels", path+".metadata")
	if err != nil {
		return err
	}
	if f.revision, err = stringAt(labels, revisionLabel, path+".metadata.labels"); err != nil {
		return err
	}
	created, err := stringAt(meta, "creationTimestamp", path+".metadata")
	if err != nil {
		return err
	}
	if f.created, err = parseCreated(created, path); err != nil {
		return err
	}
	f.image, err = memgraphImage(pod, path)
	return err
}

// parseCreated reads a creationTimestamp ("" is no time).
func parseCreated(created, path string) (metav1.Time, error) {
	if created == "" {
		return metav1.Time{}, nil
	}
	at, err := time.Parse(time.RFC3339, created)
	if err != nil {
		return metav1.Time{}, badRequestf("%s.metadata.creationTimestamp must be an RFC 3339 time, got %s", path, describeValue(created))
	}
	return metav1.NewTime(at), nil
}
