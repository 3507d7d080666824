package metacontroller

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// DecoratorController is the part of a DecoratorController spec this driver honours: one
// resource without a selector, no attachments, a v2 sync hook whose answer sets labels and
// annotations on the object (Metacontroller v4.17.2, pkg/controller/decorator/controller.go: a
// null value removes the key; the object is written with an update, and only when a key changed).
type DecoratorController struct {
	Name            string
	Resource        Resource
	ResyncPeriod    time.Duration
	Sync            *Hook
	EndpointConfigs []EndpointConfig
	Object          map[string]any
}

type rawDC struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Resources []struct {
			APIVersion    string `json:"apiVersion"`
			Resource      string `json:"resource"`
			LabelSelector any    `json:"labelSelector"`
		} `json:"resources"`
		Attachments         []any            `json:"attachments"`
		ResyncPeriodSeconds *int32           `json:"resyncPeriodSeconds"`
		EndpointConfigs     []EndpointConfig `json:"endpointConfigs"`
		Hooks               *struct {
			Sync *rawHook `json:"sync"`
		} `json:"hooks"`
	} `json:"spec"`
}

// ParseDecoratorController parses one DecoratorController document (YAML or JSON).
func ParseDecoratorController(doc []byte) (*DecoratorController, error) {
	var raw rawDC
	obj, err := unmarshalDocument(doc, &raw)
	if err != nil {
		return nil, err
	}
	s := raw.Spec
	if len(s.Resources) != 1 || s.Resources[0].LabelSelector != nil || len(s.Attachments) > 0 {
		return nil, errors.New("the e2e driver plays a DecoratorController of one resource, without a selector or attachments")
	}
	if s.Hooks == nil || s.Hooks.Sync == nil {
		return nil, errors.New("hooks.sync is not defined")
	}
	sync, err := parseHook("sync", s.Hooks.Sync)
	if err != nil {
		return nil, err
	}
	if sync.Version != "v2" {
		return nil, errors.New("the e2e driver plays v2 decorator hooks only")
	}
	dc := &DecoratorController{
		Name:     raw.Metadata.Name,
		Resource: Resource{APIVersion: s.Resources[0].APIVersion, Resource: s.Resources[0].Resource},
		Sync:     sync, EndpointConfigs: s.EndpointConfigs, Object: obj,
	}
	if p := s.ResyncPeriodSeconds; p != nil {
		dc.ResyncPeriod = max(time.Duration(*p)*time.Second, time.Second)
	}
	return dc, nil
}

// LoadDecoratorController finds the DecoratorController called name among the YAML files under
// dir (recursively) and parses it.
func LoadDecoratorController(dir, name string) (*DecoratorController, error) {
	var found *DecoratorController
	err := walkDocuments(dir, "DecoratorController", func(_ string, doc []byte) error {
		dc, err := ParseDecoratorController(doc)
		if err == nil && dc.Name == name {
			found = dc
		}
		return err
	})
	if err == nil && found == nil {
		err = fmt.Errorf("no DecoratorController %s in %s", name, dir)
	}
	return found, err
}

// Decorator runs a DecoratorController until Stop: each object's add or change, and each
// resync, calls the sync hook with the object and writes the labels and annotations it answers.
type Decorator struct {
	hooks    *Controller // connection settings, the hook call and its counters
	dc       *DecoratorController
	factory  dynamicinformer.DynamicSharedInformerFactory
	informer cache.SharedIndexInformer
	res      kindInfo
	queue    workqueue.TypedRateLimitingInterface[string]
	stop     chan struct{}
	wg       sync.WaitGroup
}

// NewDecorator prepares a driver for dc with opts' client, hook address and logger (opts.CC,
// Namespace and Workers are not used: the decorated resource is cluster-wide, one worker).
func NewDecorator(dc *DecoratorController, opts Options) (*Decorator, error) {
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	opts.CC = &CompositeController{Name: dc.Name, Sync: dc.Sync, EndpointConfigs: dc.EndpointConfigs, Object: dc.Object}
	hooks := &Controller{opts: opts, cc: opts.CC, stats: newStats(),
		factory:        dynamicinformer.NewDynamicSharedInformerFactory(opts.Dynamic, 0),
		clusterFactory: dynamicinformer.NewDynamicSharedInformerFactory(opts.Dynamic, 0)}
	res, err := hooks.resolve(dc.Resource)
	if err != nil {
		return nil, fmt.Errorf("resource: %w", err)
	}
	d := &Decorator{hooks: hooks, dc: dc, res: res, informer: res.informer.Informer(),
		factory: hooks.clusterFactory,
		queue:   workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()),
		stop:    make(chan struct{})}
	if res.namespaced {
		d.factory = hooks.factory
	}
	return d, nil
}

// Start resolves the hook's connection settings and runs the informer and a worker.
func (d *Decorator) Start(ctx context.Context) error {
	resolved, err := d.hooks.resolveHook(ctx, d.dc.Sync)
	if err != nil {
		return fmt.Errorf("can't resolve endpoint config for hook %s: %w", d.dc.Sync.URL, err)
	}
	d.hooks.hooks = map[*Hook]*hookClient{d.dc.Sync: resolved}
	enqueue := func(obj any) {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			d.queue.Add(objectKey(u))
		}
	}
	if _, err := d.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue, UpdateFunc: func(_, cur any) { enqueue(cur) },
	}); err != nil {
		return err
	}
	d.factory.Start(d.stop)
	if !cache.WaitForCacheSync(ctx.Done(), d.informer.HasSynced) {
		return fmt.Errorf("informer for %s did not sync", d.dc.Resource.Resource)
	}
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		for d.processNext() {
		}
	}()
	if d.dc.ResyncPeriod > 0 {
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			t := time.NewTicker(d.dc.ResyncPeriod)
			defer t.Stop()
			for {
				select {
				case <-d.stop:
					return
				case <-t.C:
					for _, obj := range d.informer.GetStore().List() {
						enqueue(obj)
					}
				}
			}
		}()
	}
	return nil
}

// Stop ends the worker and the informer.
func (d *Decorator) Stop() {
	select {
	case <-d.stop:
		return
	default:
	}
	close(d.stop)
	d.queue.ShutDown()
	d.wg.Wait()
	d.factory.Shutdown()
}

// Stats returns the driver's counters (its hook calls).
func (d *Decorator) Stats() *Stats { return d.hooks.stats }

func (d *Decorator) processNext() bool {
	key, quit := d.queue.Get()
	if quit {
		return false
	}
	defer d.queue.Done(key)
	retryAfter, err := d.sync(key)
	switch {
	case err != nil:
		d.hooks.stats.recordError(key, err)
		d.hooks.opts.Logf("metacontroller: decorate %s: %v", key, err)
		d.queue.AddRateLimited(key)
	case retryAfter > 0:
		d.queue.AddAfter(key, retryAfter)
	default:
		d.queue.Forget(key)
	}
	return true
}

type decoratorResponse struct {
	Labels             map[string]*string `json:"labels"`
	Annotations        map[string]*string `json:"annotations"`
	Status             map[string]any     `json:"status"`
	Attachments        []map[string]any   `json:"attachments"`
	ResyncAfterSeconds float64            `json:"resyncAfterSeconds"`
}

func (d *Decorator) sync(key string) (time.Duration, error) {
	obj, exists, err := d.informer.GetStore().GetByKey(key)
	if err != nil || !exists {
		return 0, err
	}
	u := obj.(*unstructured.Unstructured).DeepCopy()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req := map[string]any{"controller": d.dc.Object, "object": u.Object,
		"attachments": map[string]any{}, "related": map[string]any{}, "finalizing": false}
	var resp decoratorResponse
	after, err := d.hooks.post(ctx, "sync", d.dc.Sync, req, &resp)
	if err != nil || after > 0 {
		return after, err
	}
	if len(resp.Attachments) > 0 || resp.Status != nil {
		return 0, errors.New("the e2e driver's decorator does not write attachments or status")
	}
	if resp.ResyncAfterSeconds > 0 {
		d.queue.AddAfter(key, time.Duration(resp.ResyncAfterSeconds*float64(time.Second)))
	}
	labels, annotations := maps.Clone(u.GetLabels()), maps.Clone(u.GetAnnotations())
	changed := setKeys(&labels, resp.Labels)
	changed = setKeys(&annotations, resp.Annotations) || changed
	if !changed {
		return 0, nil
	}
	u.SetLabels(labels)
	u.SetAnnotations(annotations)
	client := d.hooks.client(d.res, u.GetNamespace())
	updated, err := client.Update(ctx, u, metav1.UpdateOptions{})
	switch {
	case apierrors.IsNotFound(err), apierrors.IsConflict(err):
		return 0, nil // the next event of the object syncs it again
	case err != nil:
		return 0, err
	}
	d.hooks.stats.recordWrite("update", d.res.kind, updated, "labels and annotations")
	return 0, nil
}

// setKeys applies a hook's answer to m (a nil value removes the key) and reports a change.
func setKeys(m *map[string]string, answer map[string]*string) bool {
	changed := false
	for k, v := range answer {
		old, had := (*m)[k]
		switch {
		case v == nil && had:
			delete(*m, k)
			changed = true
		case v != nil && (!had || old != *v):
			if *m == nil {
				*m = map[string]string{}
			}
			(*m)[k] = *v
			changed = true
		}
	}
	return changed
}
