package metacontroller

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
)

const controllerUIDLabel = "controller-uid"

// objectMap is a request's children/related map: kind key -> "namespace/name" (v2) -> object.
type objectMap map[string]map[string]any

// syncKey runs one sync of the parent at key. A positive duration asks for a requeue after it
// (resyncAfterSeconds or a 429's Retry-After) without counting as a failure.
func (c *Controller) syncKey(key string) (time.Duration, error) {
	obj, exists, err := c.parent.informer.Informer().GetStore().GetByKey(key)
	if err != nil {
		return 0, err
	}
	if !exists {
		return 0, nil
	}
	parent := obj.(*unstructured.Unstructured).DeepCopy()
	if !c.parentMatches(parent) {
		return 0, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	finalizing, err := c.prepareFinalizer(ctx, parent)
	if err != nil {
		return 0, err
	}

	selector, err := c.selector(parent)
	if err != nil {
		return 0, err
	}
	observed, observedObjs, err := c.claimChildren(ctx, parent, selector)
	if err != nil {
		return 0, err
	}
	related, err := c.relatedObjects(ctx, parent)
	if err != nil {
		return 0, err
	}
	req := map[string]any{
		"controller": c.cc.Object,
		"parent":     parent.Object,
		"children":   observed,
		"related":    related,
		"finalizing": finalizing,
	}
	c.stats.syncStarted(key)
	hook := c.cc.Sync
	if finalizing {
		hook = c.cc.Finalize
	}
	resp, retryAfter, err := c.callHook(ctx, hook, req)
	if err != nil || retryAfter > 0 {
		return retryAfter, err
	}
	desired, err := c.desiredChildren(parent, selector, resp.Children)
	if err != nil {
		return 0, err
	}
	if resp.ResyncAfterSeconds > 0 {
		c.queue.AddAfter(key, time.Duration(resp.ResyncAfterSeconds*float64(time.Second)))
	}
	// Children are managed while the parent lives, and while a finalize hook finalizes it.
	var manageErr error
	if parent.GetDeletionTimestamp() == nil || finalizing {
		manageErr = c.manageChildren(ctx, parent, observedObjs, desired)
	}
	if err := c.updateStatus(ctx, parent, resp.Status); err != nil {
		switch {
		case apierrors.IsNotFound(err), apierrors.IsConflict(err):
			return 0, manageErr
		default:
			return 0, fmt.Errorf("update status of %s: %w", key, err)
		}
	}
	if finalizing && resp.Finalized && manageErr == nil {
		if err := c.removeFinalizer(ctx, parent); err != nil {
			return 0, err
		}
	}
	c.stats.syncDone()
	return 0, manageErr
}

// finalizerName is the finalizer Metacontroller v4.17 puts on every parent of a
// CompositeController with a finalize hook (pkg/controller/composite/controller.go).
func (c *Controller) finalizerName() string {
	return "metacontroller.io/compositecontroller-" + c.cc.Name
}

// prepareFinalizer plays Metacontroller's finalizer handling before a sync: with a finalize hook,
// a live parent gets the finalizer first (the sync goes on with the updated object), and a parent
// being deleted that still carries it is finalized (the finalize hook instead of the sync hook).
func (c *Controller) prepareFinalizer(ctx context.Context, parent *unstructured.Unstructured) (bool, error) {
	if c.cc.Finalize == nil {
		return false, nil
	}
	has := slices.Contains(parent.GetFinalizers(), c.finalizerName())
	switch {
	case parent.GetDeletionTimestamp() != nil:
		return has, nil
	case has:
		return false, nil
	}
	client := c.parentClient(parent.GetNamespace())
	return false, retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		cur, err := client.Get(ctx, parent.GetName(), metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cur.GetUID() != parent.GetUID() || slices.Contains(cur.GetFinalizers(), c.finalizerName()) {
			return nil
		}
		cur.SetFinalizers(append(cur.GetFinalizers(), c.finalizerName()))
		updated, err := client.Update(ctx, cur, metav1.UpdateOptions{})
		if err != nil {
			return err
		}
		c.stats.recordWrite("finalizer", c.parent.kind, updated, "")
		parent.SetFinalizers(updated.GetFinalizers())
		parent.SetResourceVersion(updated.GetResourceVersion())
		return nil
	})
}

// removeFinalizer takes the finalizer off a parent its finalize hook finalized.
func (c *Controller) removeFinalizer(ctx context.Context, parent *unstructured.Unstructured) error {
	client := c.parentClient(parent.GetNamespace())
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		cur, err := client.Get(ctx, parent.GetName(), metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cur.GetUID() != parent.GetUID() || !slices.Contains(cur.GetFinalizers(), c.finalizerName()) {
			return nil
		}
		cur.SetFinalizers(slices.DeleteFunc(cur.GetFinalizers(), func(f string) bool { return f == c.finalizerName() }))
		if _, err := client.Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
			return err
		}
		c.stats.recordWrite("finalizer", c.parent.kind, cur, "")
		return nil
	})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

func (c *Controller) selector(parent *unstructured.Unstructured) (labels.Selector, error) {
	if c.cc.GenerateSelector {
		return labels.SelectorFromSet(labels.Set{controllerUIDLabel: string(parent.GetUID())}), nil
	}
	var ls metav1.LabelSelector
	raw, found, err := unstructured.NestedMap(parent.Object, "spec", "selector")
	if err != nil || !found {
		return nil, fmt.Errorf(".spec.selector must have either matchLabels, matchExpressions, or both")
	}
	if err := runtimeFromUnstructured(raw, &ls); err != nil {
		return nil, err
	}
	if len(ls.MatchLabels) == 0 && len(ls.MatchExpressions) == 0 {
		return nil, fmt.Errorf(".spec.selector must have either matchLabels, matchExpressions, or both")
	}
	return metav1.LabelSelectorAsSelector(&ls)
}

// observedChild is an owned child with the client that writes it.
type observedChild struct {
	info childInfo
	obj  *unstructured.Unstructured
}

// claimChildren lists each child type in the parent's namespace, keeps those the parent
// controls and that match the selector, adopts matching orphans and releases owned children
// that no longer match. Every child type is present in the map, possibly empty.
func (c *Controller) claimChildren(ctx context.Context, parent *unstructured.Unstructured, sel labels.Selector) (objectMap, map[string]map[string]observedChild, error) {
	out := objectMap{}
	objs := map[string]map[string]observedChild{}
	for _, ch := range c.children {
		out[ch.key()] = map[string]any{}
		objs[ch.key()] = map[string]observedChild{}
		for _, item := range ch.informer.Informer().GetStore().List() {
			u := item.(*unstructured.Unstructured)
			if c.parent.namespaced && u.GetNamespace() != parent.GetNamespace() {
				continue
			}
			claimed, err := c.claim(ctx, ch, parent, sel, u.DeepCopy())
			if err != nil {
				return nil, nil, err
			}
			if claimed == nil {
				continue
			}
			name := qualifiedName(claimed)
			out[ch.key()][name] = claimed.Object
			objs[ch.key()][name] = observedChild{info: ch, obj: claimed}
		}
	}
	return out, objs, nil
}

func (c *Controller) claim(ctx context.Context, ch childInfo, parent *unstructured.Unstructured, sel labels.Selector, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	matches := sel.Matches(labels.Set(u.GetLabels()))
	ref := metav1.GetControllerOf(u)
	switch {
	case ref != nil && ref.UID != parent.GetUID():
		return nil, nil // someone else's
	case ref != nil && matches:
		return u, nil
	case ref != nil:
		// Owned but no longer selected: release it (unless either side is going away).
		if parent.GetDeletionTimestamp() != nil || u.GetDeletionTimestamp() != nil {
			return nil, nil
		}
		return nil, c.setOwnerRefs(ctx, ch, u, withoutOwner(u.GetOwnerReferences(), parent.GetUID()), "release")
	case !matches || u.GetDeletionTimestamp() != nil || parent.GetDeletionTimestamp() != nil:
		return nil, nil
	}
	// An orphan that matches: adopt it after an uncached check that the parent is still the
	// same live object.
	fresh, err := c.parentClient(parent.GetNamespace()).Get(ctx, parent.GetName(), metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	if fresh.GetUID() != parent.GetUID() || fresh.GetDeletionTimestamp() != nil {
		return nil, nil
	}
	refs := append(u.GetOwnerReferences(), controllerRef(parent))
	if err := c.setOwnerRefs(ctx, ch, u, refs, "adopt"); err != nil {
		return nil, err
	}
	u.SetOwnerReferences(refs)
	return u, nil
}

func withoutOwner(refs []metav1.OwnerReference, uid types.UID) []metav1.OwnerReference {
	var out []metav1.OwnerReference
	for _, r := range refs {
		if r.UID != uid {
			out = append(out, r)
		}
	}
	return out
}

func (c *Controller) setOwnerRefs(ctx context.Context, ch childInfo, u *unstructured.Unstructured, refs []metav1.OwnerReference, op string) error {
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		cur, err := c.client(ch.kindInfo, u.GetNamespace()).Get(ctx, u.GetName(), metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cur.GetUID() != u.GetUID() {
			return apierrors.NewNotFound(ch.gvr.GroupResource(), u.GetName())
		}
		cur.SetOwnerReferences(refs)
		_, err = c.client(ch.kindInfo, u.GetNamespace()).Update(ctx, cur, metav1.UpdateOptions{})
		return err
	})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err == nil {
		c.stats.recordWrite(op, ch.kind, u, "")
	}
	return err
}

func controllerRef(parent *unstructured.Unstructured) metav1.OwnerReference {
	yes := true
	return metav1.OwnerReference{
		APIVersion: parent.GetAPIVersion(), Kind: parent.GetKind(), Name: parent.GetName(),
		UID: parent.GetUID(), Controller: &yes, BlockOwnerDeletion: &yes,
	}
}

func qualifiedName(u *unstructured.Unstructured) string {
	if u.GetNamespace() == "" {
		return u.GetName()
	}
	return u.GetNamespace() + "/" + u.GetName()
}

// desiredChildren turns the hook's list into kind key -> name -> object, defaulting the
// namespace to the parent's, adding the controller-uid label under generateSelector, and
// refusing children the parent's selector would not match (the whole sync then fails before
// anything is applied, as in Metacontroller).
func (c *Controller) desiredChildren(parent *unstructured.Unstructured, sel labels.Selector, list []map[string]any) (map[string]map[string]*unstructured.Unstructured, error) {
	out := map[string]map[string]*unstructured.Unstructured{}
	for i, obj := range list {
		if obj == nil {
			// Metacontroller dereferences it and crashes; the driver fails the sync instead.
			return nil, fmt.Errorf("sync response children[%d] is null (Metacontroller would panic)", i)
		}
		u := &unstructured.Unstructured{Object: obj}
		if u.GetNamespace() == "" && c.parent.namespaced {
			u.SetNamespace(parent.GetNamespace())
		}
		lbls, _, err := unstructured.NestedStringMap(u.Object, "metadata", "labels")
		if err != nil {
			return nil, fmt.Errorf("invalid labels on desired child %s %s: %w", u.GetKind(), qualifiedName(u), err)
		}
		if c.cc.GenerateSelector {
			if lbls == nil {
				lbls = map[string]string{}
			}
			if _, ok := lbls[controllerUIDLabel]; !ok {
				lbls[controllerUIDLabel] = string(parent.GetUID())
				u.SetLabels(lbls)
			}
		}
		if !sel.Matches(labels.Set(lbls)) {
			return nil, fmt.Errorf("labels on desired child %s %s don't match parent selector", u.GetKind(), qualifiedName(u))
		}
		key := u.GetKind() + "." + u.GetAPIVersion()
		if out[key] == nil {
			out[key] = map[string]*unstructured.Unstructured{}
		}
		out[key][qualifiedName(u)] = u
	}
	return out, nil
}

// updateStatus replaces .status wholesale with the hook's status plus observedGeneration,
// through the status subresource, and only when it differs from the live object's.
func (c *Controller) updateStatus(ctx context.Context, parent *unstructured.Unstructured, status map[string]any) error {
	if status == nil {
		status = map[string]any{}
	}
	status["observedGeneration"] = parent.GetGeneration()
	client := c.parentClient(parent.GetNamespace())
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		cur, err := client.Get(ctx, parent.GetName(), metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cur.GetUID() != parent.GetUID() {
			return apierrors.NewNotFound(c.parent.gvr.GroupResource(), parent.GetName())
		}
		if reflect.DeepEqual(cur.Object["status"], any(status)) {
			return nil
		}
		diff := cmp.Diff(cur.Object["status"], any(status))
		cur.Object["status"] = status
		if _, err := client.UpdateStatus(ctx, cur, metav1.UpdateOptions{}); err != nil {
			return err
		}
		c.stats.recordWrite("status", c.parent.kind, cur, diff)
		return nil
	})
	return err
}
