package metacontroller

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
)

func (c *Controller) client(k kindInfo, namespace string) dynamic.ResourceInterface {
	if k.namespaced {
		return c.opts.Dynamic.Resource(k.gvr).Namespace(namespace)
	}
	return c.opts.Dynamic.Resource(k.gvr)
}

func (c *Controller) parentClient(namespace string) dynamic.ResourceInterface {
	return c.client(c.parent, namespace)
}

func (c *Controller) childInfo(key string) (childInfo, bool) {
	for _, ch := range c.children {
		if ch.key() == key {
			return ch, true
		}
	}
	return childInfo{}, false
}

// manageChildren deletes owned children that are not desired, then creates or updates the
// desired ones. It keeps going past failures, as Metacontroller does, and returns them joined.
func (c *Controller) manageChildren(ctx context.Context, parent *unstructured.Unstructured, observed map[string]map[string]observedChild, desired map[string]map[string]*unstructured.Unstructured) error {
	var errs []error
	for key, objs := range observed {
		for name, oc := range objs {
			if oc.obj.GetDeletionTimestamp() != nil || desired[key][name] != nil {
				continue
			}
			if err := c.deleteChild(ctx, oc.info, oc.obj, "delete"); err != nil {
				errs = append(errs, err)
			}
		}
	}
	for key, objs := range desired {
		info, known := c.childInfo(key)
		if !known {
			// Metacontroller would create it and never observe it again; the driver refuses.
			errs = append(errs, fmt.Errorf("hook returned %s, which is not among the CompositeController's childResources", key))
			continue
		}
		for name, want := range objs {
			var err error
			if oc, ok := observed[key][name]; ok {
				err = c.updateChild(ctx, info, oc.obj, want)
			} else {
				err = c.createChild(ctx, info, parent, want)
			}
			if err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

func (c *Controller) deleteChild(ctx context.Context, info childInfo, obj *unstructured.Unstructured, op string) error {
	uid := obj.GetUID()
	background := metav1.DeletePropagationBackground
	err := c.client(info.kindInfo, obj.GetNamespace()).Delete(ctx, obj.GetName(), metav1.DeleteOptions{
		Preconditions:     &metav1.Preconditions{UID: &uid},
		PropagationPolicy: &background,
	})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("can't delete %s %s: %w", info.kind, qualifiedName(obj), err)
	}
	c.stats.recordWrite(op, info.kind, obj, "")
	return nil
}

func (c *Controller) updateChild(ctx context.Context, info childInfo, observed, desired *unstructured.Unstructured) error {
	merged, err := applyUpdate(observed.Object, desired.Object)
	if err != nil {
		return fmt.Errorf("%s %s: %w", info.kind, qualifiedName(observed), err)
	}
	if reflect.DeepEqual(merged, observed.Object) {
		return nil
	}
	if observed.GetDeletionTimestamp() != nil {
		return nil
	}
	diff := cmp.Diff(observed.Object, merged)
	switch info.method {
	case MethodOnDelete, "":
		c.stats.recordSkipped(info.kind, observed, diff)
		return nil
	case MethodRecreate, MethodRollingRecreate:
		return c.deleteChild(ctx, info, observed, "recreate")
	case MethodInPlace, MethodRollingInPlace:
		_, err := c.client(info.kindInfo, observed.GetNamespace()).Update(ctx, &unstructured.Unstructured{Object: merged}, metav1.UpdateOptions{})
		switch {
		case apierrors.IsNotFound(err), apierrors.IsConflict(err):
			return nil
		case err != nil:
			return fmt.Errorf("can't update %s %s: %w", info.kind, qualifiedName(observed), err)
		}
		c.stats.recordWrite("update", info.kind, observed, diff)
		return nil
	default:
		return fmt.Errorf("invalid update strategy for %s: unknown method %q", info.kind, info.method)
	}
}

func (c *Controller) createChild(ctx context.Context, info childInfo, parent, desired *unstructured.Unstructured) error {
	obj := runtime.DeepCopyJSON(desired.Object)
	// The last-applied configuration is the desired object itself, recorded before the owner
	// reference is added.
	if err := setLastApplied(obj, runtime.DeepCopyJSON(desired.Object)); err != nil {
		return err
	}
	u := &unstructured.Unstructured{Object: obj}
	u.SetOwnerReferences(append(u.GetOwnerReferences(), controllerRef(parent)))
	_, err := c.client(info.kindInfo, u.GetNamespace()).Create(ctx, u, metav1.CreateOptions{})
	switch {
	case apierrors.IsAlreadyExists(err):
		c.stats.recordSkipped(info.kind, u, "create: AlreadyExists (swallowed, as Metacontroller does)")
		return nil
	case err != nil:
		return fmt.Errorf("can't create %s %s: %w", info.kind, qualifiedName(u), err)
	}
	c.stats.recordWrite("create", info.kind, u, "")
	return nil
}
