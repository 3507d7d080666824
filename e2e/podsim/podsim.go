// Package podsim gives each scheduled Pod a simulated Memgraph instance in a
// memgraph/sim World, so the hook's Bolt traffic to "the Pod" reaches something that behaves
// like Memgraph. The instance is addressed by the Pod's DNS name (<hostname>.<subdomain>.<ns>.
// svc.<cluster domain>, as a StatefulSet's governing Service publishes it) and listens on the
// ports the Pod's container declares; the World is the hook's address resolver.
//
// Lifecycle, mirroring a process on a volume: a scheduled Pod starts its instance, and only then
// does kwok make it Running and Ready (env.ProcessAnnotation), as a kubelet's probe would; a Pod
// being deleted or gone kills it, keeping its state; the same Pod name back on the same
// PersistentVolumeClaims restarts it with that state, and back on fresh claims wipes it; once the
// Pod is gone and its claims are deleted too, the instance is removed for good.
//
// TLS: the files a Pod's TLS flags name (--bolt-*-file, --cluster-*-file) are projected from the
// Secrets its volumes mount, into a directory of the Pod's own, when the Pod starts; a running
// Pod's files follow a changed Secret ProjectionDelay later, as the kubelet's sync does. The
// instance reads them as Memgraph does: at start and on RELOAD … TLS (sim.TLSFiles).
//
// Versions: each instance runs the Memgraph version of its Pod's memgraph container image tag
// (ImageTag), started and restarted at it, so a Pod replaced with a new image runs the new
// version on the old state (sim.World.RestartAt) and the simulator's version rules apply.
package podsim

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/e2e/env"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/bolt"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// ClusterDomain is the environment's DNS domain (what a kubelet would be configured with).
const ClusterDomain = "cluster.local"

// Event is one lifecycle step the simulator took, for failure reports.
type Event struct {
	At   time.Time
	Host string
	What string // start, kill, restart, wipe, remove, or an error
}

// Pods runs the mapping for one namespace.
type Pods struct {
	World     *sim.World
	client    kubernetes.Interface
	namespace string
	interval  time.Duration
	root      string // each Pod's projected TLS files, under <root>/<host>

	mu       sync.Mutex
	tracked  map[string]*instance // by host
	agents   map[string]*podAgent // by host: data Pods' backup agents (agent.go)
	dataRoot string               // the data instances' directories (agent.go)
	pool     *bolt.Pool           // the agents' Bolt to their pods' instances (agent.go)
	events   []Event

	onGone func(host string)

	poke chan struct{} // a Pod changed: reconcile now
	stop chan struct{}
	done chan struct{}
}

// OnGone registers f to run (under the simulator's lock, before the kill) whenever the Pod of
// a running instance disappears or stops being Ready: the moment the process dies. Tests use
// it to check what the cluster looked like just before a member's Pod went.
func (p *Pods) OnGone(f func(host string)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.onGone = f
}

type instance struct {
	pod     string
	podUID  types.UID
	volumes string // the PVC UIDs the pod mounted, sorted
	running bool
	version string // the image tag it runs at
	// projected identifies the TLS files last projected into the Pod; changedAt is when the
	// Secrets were first seen to hold other content (zero: they hold the projected one).
	projected string
	changedAt time.Time
}

// Start maps the namespace's Pods on every Pod event, and every interval besides (claims,
// missed events).
//
// Reacting to events matters: a real Pod's process dies before the Pod is gone, and its
// replacement is Ready only once its new process runs. Polling alone let the replacement be
// Ready (kwok marks it at once) while the old process still ran, so the hook could hand the Raft
// leadership to a process about to be killed.
func Start(client kubernetes.Interface, world *sim.World, namespace string, interval time.Duration) *Pods {
	dataRoot, err := os.MkdirTemp("", "podsim-data-")
	if err != nil {
		panic(fmt.Sprintf("podsim: a directory for the data instances: %v", err))
	}
	root, err := os.MkdirTemp("", "podsim-tls-")
	if err != nil {
		panic(fmt.Sprintf("podsim: a directory for the projected TLS files: %v", err))
	}
	p := &Pods{
		World: world, client: client, namespace: namespace, interval: interval, dataRoot: dataRoot, root: root,
		tracked: map[string]*instance{}, agents: map[string]*podAgent{}, poke: make(chan struct{}, 1),
		stop: make(chan struct{}), done: make(chan struct{}),
	}
	watching := make(chan struct{})
	go func() {
		defer close(watching)
		p.watch()
	}()
	go func() {
		p.loop()
		<-watching
		close(p.done)
	}()
	return p
}

// watch pokes the loop on every Pod event in the namespace until Stop, watching again whenever
// the API server ends a watch.
func (p *Pods) watch() {
	for {
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			select {
			case <-p.stop:
			case <-ctx.Done():
			}
			cancel()
		}()
		w, err := p.client.CoreV1().Pods(p.namespace).Watch(ctx, metav1.ListOptions{})
		if err == nil {
			for range w.ResultChan() {
				select {
				case p.poke <- struct{}{}:
				default: // a reconcile is pending already
				}
			}
			w.Stop()
		}
		cancel()
		select {
		case <-p.stop:
			return
		case <-time.After(p.interval):
		}
	}
}

// Stop ends polling and the backup agents, and removes the data directories; the World keeps
// running.
func (p *Pods) Stop() {
	select {
	case <-p.stop:
	default:
		close(p.stop)
	}
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	for host := range p.agents {
		p.stopAgent(host)
	}
	if p.pool != nil {
		_ = p.pool.Close()
	}
	_ = os.RemoveAll(p.dataRoot)
	_ = os.RemoveAll(p.root)
}

// Events returns the lifecycle steps taken so far.
func (p *Pods) Events() []Event {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Event(nil), p.events...)
}

// Version is the image tag the instance at host was last started at ("" when untracked).
func (p *Pods) Version(host string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if in, ok := p.tracked[host]; ok {
		return in.version
	}
	return ""
}

// Running reports whether the instance at host is up.
func (p *Pods) Running(host string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	in, ok := p.tracked[host]
	return ok && in.running
}

func (p *Pods) loop() {
	t := time.NewTicker(p.interval)
	defer t.Stop()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := p.Reconcile(ctx); err != nil {
			p.record("", "error: "+err.Error())
		}
		cancel()
		select {
		case <-p.stop:
			return
		case <-t.C:
		case <-p.poke:
		}
	}
}

// Reconcile brings the World in line with the namespace's Pods and claims once.
func (p *Pods) Reconcile(ctx context.Context) error {
	pods, err := p.client.CoreV1().Pods(p.namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	pvcs, err := p.client.CoreV1().PersistentVolumeClaims(p.namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	claimUID := map[string]types.UID{}
	for _, c := range pvcs.Items {
		if c.DeletionTimestamp == nil {
			claimUID[c.Name] = c.UID
		}
	}
	started := p.reconcile(pods.Items, claimUID)
	for _, pod := range started {
		if err := p.markStarted(ctx, pod); err != nil {
			return err
		}
	}
	return nil
}

// reconcile runs the instance of every scheduled Pod that is not being deleted and kills the
// others', and returns the Pods whose instance runs but that do not say so yet
// (env.ProcessAnnotation).
func (p *Pods) reconcile(pods []corev1.Pod, claimUID map[string]types.UID) []*corev1.Pod {
	p.mu.Lock()
	defer p.mu.Unlock()
	seen := map[string]bool{}
	var started []*corev1.Pod
	for i := range pods {
		pod := &pods[i]
		role := pod.Labels[v1alpha1.LabelComponent]
		if role != topology.RoleCoordinator && role != topology.RoleData {
			continue
		}
		host := PodHost(pod)
		if host == "" || pod.Spec.NodeName == "" || pod.DeletionTimestamp != nil {
			continue
		}
		seen[host] = true
		p.ensureRunning(pod, role, host, volumeKey(pod, claimUID))
		if in := p.tracked[host]; in != nil && in.running && role == topology.RoleData {
			p.ensureAgent(pod, host)
		}
		if in := p.tracked[host]; in != nil && in.running && pod.Annotations[env.ProcessAnnotation] != string(pod.UID) {
			started = append(started, pod)
		}
	}
	for host, in := range p.tracked {
		if seen[host] {
			continue
		}
		if in.running {
			if p.onGone != nil {
				p.onGone(host)
			}
			p.apply(host, "kill", p.World.Kill(host))
			in.running = false
		}
		p.stopAgent(host)
		if !volumesExist(in.volumes, claimUID) {
			p.apply(host, "remove", p.World.Remove(host))
			p.removeDataDir(host)
			delete(p.tracked, host)
		}
	}
	return started
}

// markStarted annotates the Pod with its UID (env.ProcessAnnotation): kwok makes it Running
// and Ready only then.
func (p *Pods) markStarted(ctx context.Context, pod *corev1.Pod) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"uid":         pod.UID, // the Pod started, not a later one of the same name
		"annotations": map[string]string{env.ProcessAnnotation: string(pod.UID)},
	}})
	if err != nil {
		return err
	}
	_, err = p.client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil // gone, or replaced: the next reconcile sees the new one
	}
	return err
}

func (p *Pods) ensureRunning(pod *corev1.Pod, role, host, volumes string) {
	in, known := p.tracked[host]
	version := ImageTag(pod)
	switch {
	case !known:
		in = &instance{pod: pod.Name, podUID: pod.UID, volumes: volumes, running: true, version: version}
		if err := p.startFresh(pod, role, host, version, in); err != nil {
			p.record(host, "start failed: "+err.Error())
			return
		}
		p.tracked[host] = in
		p.record(host, "start "+role+" at "+version)
	case in.running && in.podUID == pod.UID:
		p.refresh(host, pod, in)
	case in.volumes == volumes:
		if _, err := p.mountAtStart(host, pod, in); err != nil {
			p.record(host, "restart failed: "+err.Error())
			return
		}
		p.apply(host, "restart at "+version, p.World.RestartAt(host, version))
		in.podUID, in.running, in.version = pod.UID, true, version
	default:
		if _, err := p.mountAtStart(host, pod, in); err != nil {
			p.record(host, "wipe failed: "+err.Error())
			return
		}
		p.apply(host, "wipe (fresh volumes)", p.World.Wipe(host))
		in.podUID, in.volumes, in.running = pod.UID, volumes, true
		// Wipe keeps the version; a coordinator's has no effect in the simulator, a data
		// instance's is set by restarting it on its wiped state.
		if version != in.version && role == topology.RoleData {
			p.apply(host, "restart at "+version, p.World.RestartAt(host, version))
			in.version = version
		}
	}
}

func (p *Pods) startFresh(pod *corev1.Pod, role, host, version string, in *instance) error {
	ports := containerPorts(pod)
	files, err := p.mountAtStart(host, pod, in)
	if err != nil {
		return err
	}
	if role == topology.RoleCoordinator {
		id, err := strconv.Atoi(pod.Labels[topology.LabelPodIndex])
		if err != nil {
			return fmt.Errorf("pod %s has no usable %s label: %w", pod.Name, topology.LabelPodIndex, err)
		}
		return p.World.StartCoordinator(sim.CoordinatorSpec{
			ID: id, Host: host,
			BoltPort:        ports[topology.PortNameBolt],
			ManagementPort:  ports[topology.PortNameManagement],
			CoordinatorPort: ports[topology.PortNameCoordinator],
			Files:           files,
			Version:         version,
		})
	}
	return p.World.StartData(sim.DataSpec{
		Host:           host,
		DataDir:        p.dataDir(host),
		BoltPort:       ports[topology.PortNameBolt],
		ManagementPort: ports[topology.PortNameManagement],
		Files:          files,
		Version:        version,
	})
}

// ImageTag is the tag of the Pod's memgraph container image, the version its instance runs:
// the simulator reads X.Y.Z with an optional suffix, anything else is an unknown version. An
// image by digest has none ("").
func ImageTag(pod *corev1.Pod) string {
	for _, c := range pod.Spec.Containers {
		if c.Name != topology.ContainerName || strings.Contains(c.Image, "@") {
			continue
		}
		if colon := strings.LastIndex(c.Image, ":"); colon > strings.LastIndex(c.Image, "/") {
			return c.Image[colon+1:]
		}
	}
	return ""
}

func (p *Pods) apply(host, what string, err error) {
	if err != nil {
		what += " failed: " + err.Error()
	}
	p.record(host, what)
}

func (p *Pods) record(host, what string) {
	p.events = append(p.events, Event{At: time.Now(), Host: host, What: what})
}

// PodHost is the Pod's DNS name through its StatefulSet's governing Service.
func PodHost(pod *corev1.Pod) string {
	if pod.Spec.Hostname == "" || pod.Spec.Subdomain == "" {
		return ""
	}
	return fmt.Sprintf("%s.%s.%s.svc.%s", pod.Spec.Hostname, pod.Spec.Subdomain, pod.Namespace, ClusterDomain)
}

func containerPorts(pod *corev1.Pod) map[string]int32 {
	out := map[string]int32{}
	for _, c := range pod.Spec.Containers {
		for _, port := range c.Ports {
			if port.Name != "" {
				out[port.Name] = port.ContainerPort
			}
		}
	}
	return out
}

// volumeKey names the claims a pod runs on by their UIDs, so a claim deleted and recreated
// under the same name counts as a fresh volume.
func volumeKey(pod *corev1.Pod, claimUID map[string]types.UID) string {
	var ids []string
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim == nil {
			continue
		}
		uid, ok := claimUID[v.PersistentVolumeClaim.ClaimName]
		if !ok {
			uid = types.UID("missing:" + v.PersistentVolumeClaim.ClaimName)
		}
		ids = append(ids, string(uid))
	}
	sort.Strings(ids)
	return strings.Join(ids, ",")
}

func volumesExist(key string, claimUID map[string]types.UID) bool {
	if key == "" {
		return false
	}
	live := map[string]bool{}
	for _, uid := range claimUID {
		live[string(uid)] = true
	}
	for _, id := range strings.Split(key, ",") {
		if live[id] {
			return true
		}
	}
	return false
}
