package metacontroller

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	sigsjson "sigs.k8s.io/json"
)

// SyncResponse is the sync hook's answer, decoded case-sensitively with integers preserved.
type SyncResponse struct {
	Status             map[string]any   `json:"status"`
	Children           []map[string]any `json:"children"`
	ResyncAfterSeconds float64          `json:"resyncAfterSeconds"`
	Finalized          bool             `json:"finalized"`
}

// RelatedRule is one relatedResources entry of a customize response.
type RelatedRule struct {
	APIVersion        string                `json:"apiVersion"`
	Resource          string                `json:"resource"`
	LabelSelector     *metav1.LabelSelector `json:"labelSelector,omitempty"`
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`
	Namespace         string                `json:"namespace,omitempty"`
	Names             []string              `json:"names,omitempty"`
}

type customizeResponse struct {
	RelatedResources []RelatedRule `json:"relatedResources"`
}

// HookError is a hook call that did not answer 200: Metacontroller changes nothing that round.
type HookError struct {
	Hook   string
	Status int
	Body   string
}

func (e *HookError) Error() string {
	return fmt.Sprintf("%s hook failed: unsupported status code: %d body: %s", e.Hook, e.Status, e.Body)
}

// post sends body to the hook and decodes a 200 answer into out. A 429 returns its Retry-After.
func (c *Controller) post(ctx context.Context, name string, h *Hook, body any, out any) (time.Duration, error) {
	data, err := json.Marshal(body)
	if err != nil {
		return 0, fmt.Errorf("%s hook: marshal request: %w", name, err)
	}
	ctx, cancel := context.WithTimeout(ctx, h.Timeout)
	defer cancel()
	hc := c.hooks[h]
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, hc.url, bytes.NewReader(data))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	if hc.auth != "" {
		req.Header.Set("Authorization", hc.auth)
	}
	started := time.Now()
	resp, err := hc.client.Do(req)
	if err != nil {
		c.stats.recordHook(name, 0, time.Since(started))
		return 0, fmt.Errorf("%s hook failed: http error: %w", name, err)
	}
	defer resp.Body.Close()
	respBody, err := io.ReadAll(resp.Body)
	c.stats.recordHook(name, resp.StatusCode, time.Since(started))
	if err != nil {
		return 0, fmt.Errorf("%s hook: read response: %w", name, err)
	}
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusTooManyRequests:
		return retryAfter(resp.Header.Get("Retry-After")), nil
	default:
		return 0, &HookError{Hook: name, Status: resp.StatusCode, Body: string(respBody)}
	}
	strictErrs, err := sigsjson.UnmarshalStrict(respBody, out)
	if err != nil {
		return 0, fmt.Errorf("%s hook: decode response: %w", name, err)
	}
	if h.Strict && len(strictErrs) > 0 {
		return 0, fmt.Errorf("%s hook: response does not decode strictly: %w", name, errors.Join(strictErrs...))
	}
	return 0, nil
}

func retryAfter(v string) time.Duration {
	if s, err := strconv.Atoi(v); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && time.Until(t) > 0 {
		return time.Until(t)
	}
	return time.Second
}

func (c *Controller) callHook(ctx context.Context, hook *Hook, req map[string]any) (*SyncResponse, time.Duration, error) {
	var resp SyncResponse
	name := "sync"
	if hook == c.cc.Finalize {
		name = "finalize"
	}
	after, err := c.post(ctx, name, hook, req, &resp)
	if err != nil || after > 0 {
		return nil, after, err
	}
	return &resp, 0, nil
}

// relatedObjects asks the customize hook (cached per parent uid and generation, as
// Metacontroller does) which objects to send, and collects them keyed like children.
func (c *Controller) relatedObjects(ctx context.Context, parent *unstructured.Unstructured) (objectMap, error) {
	out := objectMap{}
	if c.cc.Customize == nil {
		return out, nil
	}
	cacheKey := fmt.Sprintf("%s/%d", parent.GetUID(), parent.GetGeneration())
	c.customizeMu.Lock()
	rules, cached := c.customizeCache[cacheKey]
	c.customizeMu.Unlock()
	if !cached {
		var resp customizeResponse
		after, err := c.post(ctx, "customize", c.cc.Customize, map[string]any{"controller": c.cc.Object, "parent": parent.Object}, &resp)
		if err != nil {
			return nil, err
		}
		if after > 0 {
			return nil, fmt.Errorf("customize hook asked to retry after %s", after)
		}
		rules = resp.RelatedResources
		c.customizeMu.Lock()
		c.customizeCache[cacheKey] = rules
		c.customizeMu.Unlock()
	}
	for _, rule := range rules {
		if err := c.collectRelated(ctx, parent, rule, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Related are the keys of the related objects a sync of the parent at key (namespace/name, or
// name) would carry now, by type key, sorted: what its customize answer selects.
func (c *Controller) Related(ctx context.Context, key string) (map[string][]string, error) {
	obj, exists, err := c.parent.informer.Informer().GetStore().GetByKey(key)
	if err != nil {
		return nil, err
	}
	if !exists {
		return nil, fmt.Errorf("parent %s is not in the informer's store", key)
	}
	related, err := c.relatedObjects(ctx, obj.(*unstructured.Unstructured))
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for typ, objs := range related {
		out[typ] = slices.Sorted(maps.Keys(objs))
	}
	return out, nil
}

func (c *Controller) collectRelated(ctx context.Context, parent *unstructured.Unstructured, rule RelatedRule, out objectMap) error {
	if len(rule.Names) > 0 && rule.LabelSelector != nil {
		return fmt.Errorf("related rule %s: names can't be combined with labelSelector", rule.Resource)
	}
	if rule.NamespaceSelector != nil {
		return fmt.Errorf("related rule %s: namespaceSelector is not supported by the e2e driver", rule.Resource)
	}
	k, err := c.resolveRelated(ctx, Resource{APIVersion: rule.APIVersion, Resource: rule.Resource})
	if err != nil {
		return err
	}
	if out[k.key()] == nil {
		out[k.key()] = map[string]any{}
	}
	sel := labels.Everything()
	if rule.LabelSelector != nil {
		if sel, err = metav1.LabelSelectorAsSelector(rule.LabelSelector); err != nil {
			return err
		}
	}
	names := map[string]bool{}
	for _, n := range rule.Names {
		names[n] = true
	}
	ns := rule.Namespace
	if ns == "" && k.namespaced && c.parent.namespaced {
		ns = parent.GetNamespace()
	}
	for _, item := range k.informer.Informer().GetStore().List() {
		u := item.(*unstructured.Unstructured)
		if ns != "" && u.GetNamespace() != ns {
			continue
		}
		if len(names) > 0 && !names[u.GetName()] {
			continue
		}
		if !sel.Matches(labels.Set(u.GetLabels())) {
			continue
		}
		out[k.key()][qualifiedName(u)] = runtime.DeepCopyJSON(u.Object)
	}
	return nil
}

// resolveRelated starts (once) an informer for a related resource; its events enqueue every
// parent in the object's namespace, since any of them may have asked for it.
func (c *Controller) resolveRelated(ctx context.Context, r Resource) (kindInfo, error) {
	gvr, err := r.GroupVersionResource()
	if err != nil {
		return kindInfo{}, err
	}
	c.relatedMu.Lock()
	k, ok := c.related[gvr]
	if !ok {
		if k, err = c.resolve(r); err != nil {
			c.relatedMu.Unlock()
			return kindInfo{}, err
		}
		c.related[gvr] = k
		enqueue := func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if u, ok := obj.(*unstructured.Unstructured); ok {
				for _, p := range c.parentsIn(u.GetNamespace()) {
					c.enqueueParent(p)
				}
			}
		}
		_, _ = k.informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    enqueue,
			UpdateFunc: func(_, cur any) { enqueue(cur) },
			DeleteFunc: enqueue,
		})
		c.factory.Start(c.informerStop)
		c.clusterFactory.Start(c.informerStop)
	}
	c.relatedMu.Unlock()
	if !cache.WaitForCacheSync(ctx.Done(), k.informer.Informer().HasSynced) {
		return kindInfo{}, fmt.Errorf("related informer for %s not synced", gvr)
	}
	return k, nil
}

func runtimeFromUnstructured(m map[string]any, into any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructured(m, into)
}

func unmarshalPreservingInts(data []byte, into any) error {
	return sigsjson.UnmarshalCaseSensitivePreserveInts(data, into)
}
