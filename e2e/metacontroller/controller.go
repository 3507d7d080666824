package metacontroller

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// Options configure a Controller.
type Options struct {
	CC        *CompositeController
	Dynamic   dynamic.Interface
	Discovery discovery.DiscoveryInterface
	// HookAddress is where the hooks' host resolves to: the test's listener, standing in for
	// the in-cluster Service the CompositeController names. Each hook's URL is built from the
	// CompositeController as Metacontroller builds it (https://memgraph-hooks.memgraph-hooks:443/
	// sync), so TLS verifies the Service's name, and only the dial goes here.
	HookAddress string
	// Namespace limits the parents (and so children) this driver handles; "" means all.
	Namespace string
	// ResyncPeriod overrides the CompositeController's resyncPeriodSeconds when positive, so a
	// test can observe several periodic resyncs in seconds.
	ResyncPeriod time.Duration
	// Workers is the number of sync workers (Metacontroller's default is 5).
	Workers int
	Logf    func(format string, args ...any)
	// Informers, when set, are shared with the other drivers given them, as the controllers of
	// one Metacontroller process share theirs; nil, the driver has informers of its own.
	Informers *Informers
}

// Informers are informer factories several drivers share. Metacontroller keeps one informer per
// apiVersion and resource for the whole process (v4.17.2 pkg/dynamic/informer/factory.go,
// SharedInformerFactory.Resource), whether a controller watches the resource as its parent, its
// child or a related object: what one controller has seen of an object, every other has seen
// too. Stop them once every driver using them has stopped.
type Informers struct {
	factory, clusterFactory dynamicinformer.DynamicSharedInformerFactory
	stop                    chan struct{}
	once                    sync.Once
}

// NewInformers are shared informers of the objects in namespace ("" for all).
func NewInformers(client dynamic.Interface, namespace string) *Informers {
	return &Informers{
		factory:        dynamicinformer.NewFilteredDynamicSharedInformerFactory(client, 0, namespace, nil),
		clusterFactory: dynamicinformer.NewDynamicSharedInformerFactory(client, 0),
		stop:           make(chan struct{}),
	}
}

// Stop ends the shared informers.
func (i *Informers) Stop() {
	i.once.Do(func() {
		close(i.stop)
		i.factory.Shutdown()
		i.clusterFactory.Shutdown()
	})
}

// Controller runs the driver until Stop.
type Controller struct {
	opts    Options
	cc      *CompositeController
	factory dynamicinformer.DynamicSharedInformerFactory
	// clusterFactory watches cluster-scoped related resources (Nodes), which a namespace-filtered
	// informer cannot list.
	clusterFactory dynamicinformer.DynamicSharedInformerFactory
	// informers are the shared informers, when the factories are theirs (Options.Informers);
	// informerStop ends the informers the factories start.
	informers    *Informers
	informerStop chan struct{}
	queue        workqueue.TypedRateLimitingInterface[string]
	stop         chan struct{}
	wg           sync.WaitGroup

	parent   kindInfo
	children []childInfo

	relatedMu sync.Mutex
	related   map[schema.GroupVersionResource]kindInfo

	customizeMu    sync.Mutex
	customizeCache map[string][]RelatedRule // by parent uid/generation

	hooks map[*Hook]*hookClient // resolved by Start, as Metacontroller does when a controller starts

	// gate lets a test hold every sync (Pause) while it acts as a human operator.
	gate sync.RWMutex

	stats *Stats
}

type kindInfo struct {
	gvr        schema.GroupVersionResource
	kind       string
	namespaced bool
	informer   informers.GenericInformer
}

// key is the request map key of the kind: "Kind.version" for core, "Kind.group/version" else.
func (k kindInfo) key() string { return k.kind + "." + k.gvr.GroupVersion().String() }

type childInfo struct {
	kindInfo
	method string
}

// New resolves the CompositeController's resources through discovery and prepares informers.
func New(opts Options) (*Controller, error) {
	if opts.Workers <= 0 {
		opts.Workers = 2
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	c := &Controller{
		opts:           opts,
		cc:             opts.CC,
		factory:        dynamicinformer.NewFilteredDynamicSharedInformerFactory(opts.Dynamic, 0, opts.Namespace, nil),
		clusterFactory: dynamicinformer.NewDynamicSharedInformerFactory(opts.Dynamic, 0),
		queue:          workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()),
		stop:           make(chan struct{}),
		related:        map[schema.GroupVersionResource]kindInfo{},
		customizeCache: map[string][]RelatedRule{},
		stats:          newStats(),
	}
	c.informerStop = c.stop
	if shared := opts.Informers; shared != nil {
		c.factory, c.clusterFactory, c.informers, c.informerStop = shared.factory, shared.clusterFactory, shared, shared.stop
	}
	var err error
	if c.parent, err = c.resolve(opts.CC.Parent); err != nil {
		return nil, fmt.Errorf("parent resource: %w", err)
	}
	for _, child := range opts.CC.Children {
		k, err := c.resolve(child.Resource)
		if err != nil {
			return nil, fmt.Errorf("child resource: %w", err)
		}
		c.children = append(c.children, childInfo{kindInfo: k, method: child.Method})
	}
	return c, nil
}

func (c *Controller) resolve(r Resource) (kindInfo, error) {
	gvr, err := r.GroupVersionResource()
	if err != nil {
		return kindInfo{}, err
	}
	list, err := c.opts.Discovery.ServerResourcesForGroupVersion(r.APIVersion)
	if err != nil {
		return kindInfo{}, fmt.Errorf("discover %s: %w", r.APIVersion, err)
	}
	for _, res := range list.APIResources {
		if res.Name == r.Resource {
			factory := c.factory
			if !res.Namespaced {
				factory = c.clusterFactory
			}
			return kindInfo{gvr: gvr, kind: res.Kind, namespaced: res.Namespaced, informer: factory.ForResource(gvr)}, nil
		}
	}
	return kindInfo{}, fmt.Errorf("can't find resource %q in apiVersion %q", r.Resource, r.APIVersion)
}

// Start resolves the hooks' connection settings (reading their Secrets), then runs informers
// and workers; it returns once the caches have synced. Like Metacontroller, it fails to start
// while a Secret the hooks need is missing.
func (c *Controller) Start(ctx context.Context) error {
	c.hooks = map[*Hook]*hookClient{}
	for _, h := range []*Hook{c.cc.Sync, c.cc.Customize, c.cc.Finalize} {
		if h == nil {
			continue
		}
		resolved, err := c.resolveHook(ctx, h)
		if err != nil {
			return fmt.Errorf("can't resolve endpoint config for hook %s: %w", h.URL, err)
		}
		c.hooks[h] = resolved
	}
	parentHandler := cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueueParent,
		UpdateFunc: c.onParentUpdate,
		DeleteFunc: c.enqueueParent,
	}
	if _, err := c.parent.informer.Informer().AddEventHandler(parentHandler); err != nil {
		return err
	}
	for _, ch := range c.children {
		if _, err := ch.informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    c.onChild,
			UpdateFunc: func(old, cur any) { c.onChildUpdate(old, cur) },
			DeleteFunc: c.onChildDelete,
		}); err != nil {
			return err
		}
	}
	c.factory.Start(c.informerStop)
	for gvr, ok := range c.factory.WaitForCacheSync(c.stop) {
		if !ok {
			return fmt.Errorf("informer for %s did not sync", gvr)
		}
	}
	for range c.opts.Workers {
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			for c.processNext() {
			}
		}()
	}
	if period := c.resyncPeriod(); period > 0 {
		c.wg.Add(1)
		go c.resyncLoop(period)
	}
	return nil
}

func (c *Controller) resyncPeriod() time.Duration {
	if c.opts.ResyncPeriod > 0 {
		return c.opts.ResyncPeriod
	}
	return c.cc.ResyncPeriod
}

// resyncLoop enqueues every parent once per period, as the parent informer's resync does
// (resync events pass the ignoreStatusChanges filter since Metacontroller v4.17.2).
func (c *Controller) resyncLoop(period time.Duration) {
	defer c.wg.Done()
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
			c.Resync()
		}
	}
}

// Resync enqueues every parent now, as a periodic resync would.
func (c *Controller) Resync() {
	for _, obj := range c.parent.informer.Informer().GetStore().List() {
		c.enqueueParent(obj)
	}
}

// Stop ends the workers and informers.
func (c *Controller) Stop() {
	select {
	case <-c.stop:
		return
	default:
	}
	close(c.stop)
	c.queue.ShutDown()
	c.wg.Wait()
	if c.informers == nil {
		c.factory.Shutdown()
		c.clusterFactory.Shutdown()
	}
}

// Pause waits for running syncs to finish and holds new ones until Resume, so a test can
// change the cluster the way a human would without a sync interleaving.
func (c *Controller) Pause() { c.gate.Lock() }

// Resume releases the syncs Pause held.
func (c *Controller) Resume() { c.gate.Unlock() }

// Stats returns the driver's counters.
func (c *Controller) Stats() *Stats { return c.stats }

func (c *Controller) processNext() bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(key)
	c.gate.RLock()
	retryAfter, err := c.syncKey(key)
	c.gate.RUnlock()
	switch {
	case err != nil:
		c.stats.recordError(key, err)
		c.opts.Logf("metacontroller: sync %s: %v", key, err)
		c.queue.AddRateLimited(key)
	case retryAfter > 0:
		c.queue.AddAfter(key, retryAfter)
	default:
		c.queue.Forget(key)
	}
	return true
}

func (c *Controller) parentMatches(u *unstructured.Unstructured) bool {
	if len(c.cc.ParentSelector) == 0 {
		return true
	}
	return labels.SelectorFromSet(c.cc.ParentSelector).Matches(labels.Set(u.GetLabels()))
}

func (c *Controller) enqueueParent(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || !c.parentMatches(u) {
		return
	}
	c.queue.Add(objectKey(u))
}

// onParentUpdate drops status-only updates when ignoreStatusChanges is set: only generation,
// label, annotation and deletion changes pass.
func (c *Controller) onParentUpdate(old, cur any) {
	if c.cc.IgnoreStatusChanges {
		o, ok1 := old.(*unstructured.Unstructured)
		n, ok2 := cur.(*unstructured.Unstructured)
		if ok1 && ok2 && o.GetGeneration() == n.GetGeneration() &&
			reflect.DeepEqual(o.GetLabels(), n.GetLabels()) &&
			reflect.DeepEqual(o.GetAnnotations(), n.GetAnnotations()) &&
			n.GetDeletionTimestamp() == nil {
			return
		}
	}
	c.enqueueParent(cur)
}

func (c *Controller) onChild(obj any) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	if c.enqueueController(u) {
		return
	}
	// An orphan: every parent in its namespace may want to adopt it.
	for _, p := range c.parentsIn(u.GetNamespace()) {
		c.enqueueParent(p)
	}
}

func (c *Controller) onChildUpdate(old, cur any) {
	o, ok1 := old.(*unstructured.Unstructured)
	n, ok2 := cur.(*unstructured.Unstructured)
	if ok1 && ok2 && o.GetResourceVersion() == n.GetResourceVersion() {
		return
	}
	c.onChild(cur)
}

func (c *Controller) onChildDelete(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		c.enqueueController(u)
	}
}

// enqueueController enqueues the parent that controls u, if it is one of ours, and says whether
// u has a controller at all.
func (c *Controller) enqueueController(u *unstructured.Unstructured) bool {
	ref := metav1.GetControllerOf(u)
	if ref == nil {
		return false
	}
	if p := c.resolveOwner(u.GetNamespace(), ref); p != nil {
		c.enqueueParent(p)
	}
	return true
}

func (c *Controller) resolveOwner(namespace string, ref *metav1.OwnerReference) *unstructured.Unstructured {
	gv, _ := schema.ParseGroupVersion(ref.APIVersion)
	if gv.Group != c.parent.gvr.Group || ref.Kind != c.parent.kind {
		return nil
	}
	key := ref.Name
	if c.parent.namespaced {
		key = namespace + "/" + ref.Name
	}
	obj, exists, err := c.parent.informer.Informer().GetStore().GetByKey(key)
	if err != nil || !exists {
		return nil
	}
	u := obj.(*unstructured.Unstructured)
	if u.GetUID() != ref.UID {
		return nil
	}
	return u
}

// parentsIn are the parents in namespace; every parent for "" (a cluster-scoped object, which
// a v2 customize rule of a parent in any namespace may select).
func (c *Controller) parentsIn(namespace string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, obj := range c.parent.informer.Informer().GetStore().List() {
		u := obj.(*unstructured.Unstructured)
		if !c.parent.namespaced || namespace == "" || u.GetNamespace() == namespace {
			out = append(out, u)
		}
	}
	return out
}

func objectKey(u *unstructured.Unstructured) string {
	if u.GetNamespace() == "" {
		return u.GetName()
	}
	return u.GetNamespace() + "/" + u.GetName()
}

func splitKey(key string) (namespace, name string) {
	if ns, n, ok := strings.Cut(key, "/"); ok {
		return ns, n
	}
	return "", key
}

// WaitCurrent waits until the driver's cache holds the parent key (namespace/name) at the
// resourceVersion the API server serves now: a Resync that follows sees the status the last
// sync wrote, as Metacontroller's does once its informer has caught up with the API server.
func (c *Controller) WaitCurrent(ctx context.Context, key string) error {
	namespace, name, _ := strings.Cut(key, "/")
	for {
		live, err := c.parentClient(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cached, ok, err := c.parent.informer.Informer().GetStore().GetByKey(key)
		if err != nil {
			return err
		}
		if ok && cached.(*unstructured.Unstructured).GetResourceVersion() == live.GetResourceVersion() {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the driver's cache of %s did not reach resourceVersion %s: %w", key, live.GetResourceVersion(), ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
