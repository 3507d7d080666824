package env

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// controller is a control-plane process that watches the API server through informers: what it
// runs with, and where it says it is healthy.
type controller struct {
	proc     *process
	args     []string
	healthz  string
	restarts int
	restartHooks
}

// restartHooks are what a controller needs around a restart beyond a new process and /healthz.
type restartHooks struct {
	beforeStart func()                      // runs after the old process ended, before the new one starts
	ready       func(context.Context) error // nil once the new process holds what it must (nil: nothing more)
}

func (e *Env) startController(name, healthz string, args []string, hooks restartHooks) error {
	p, err := e.start(name, args...)
	if err != nil {
		return err
	}
	c := &controller{proc: p, args: args, healthz: healthz, restartHooks: hooks}
	e.controllers = append(e.controllers, c)
	go e.keepRunning(c)
	return nil
}

// crashRestartDelay is how long a controller that exited of itself stays down before it starts
// again (the kubelet's first crash-loop back-off is 10 s; a second keeps a crash loop's log short
// without outlasting the suite's waits).
const crashRestartDelay = time.Second

// keepRunning starts c again whenever its process exits of itself, as the kubelet restarts a
// control plane's static pods. kube-scheduler counts on it: it exits on purpose when a pod update
// contradicts its cache ("Pod updated on a different node than previously added to. Scheduler
// cache is corrupted", UpdatePod in pkg/scheduler/backend/cache/cache.go), which API server and
// controller restarts around a pod's re-creation can bring about; unsupervised, no pod was
// scheduled after that. A process that RestartControllers replaced or Stop ended is not restarted.
func (e *Env) keepRunning(c *controller) {
	for {
		e.ctrlMu.Lock()
		p := c.proc
		e.ctrlMu.Unlock()
		<-p.done
		time.Sleep(crashRestartDelay)
		if !e.restartExited(c, p) {
			return
		}
	}
}

// restartExited starts c again if p is still its process; false once the environment stops.
func (e *Env) restartExited(c *controller, p *process) bool {
	e.ctrlMu.Lock()
	defer e.ctrlMu.Unlock()
	e.procsMu.Lock()
	stopping := e.stopping
	e.procsMu.Unlock()
	if stopping {
		return false
	}
	if c.proc != p {
		return true
	}
	c.restarts++
	c.runBeforeStart()
	next, err := e.restartProcess(p, c.restarts, c.args)
	if err != nil {
		e.logf("%s exited of itself (%v) and cannot start again: %v", p.name, p.err, err)
		return false
	}
	c.proc = next
	e.logf("%s exited of itself (%v); started again, as the kubelet restarts a static pod (log %s)", p.name, p.err, next.logPath)
	return true
}

// RestartControllers stops kube-controller-manager, kube-scheduler and kwok and starts each again
// with the same flags — what a control-plane upgrade does after the API server (kwok plays the
// kubelets) — and returns once each serves /healthz. Each restarted process lists every object
// afresh and holds no backoff.
//
// Why a suite needs it after RestartAPIServer: right after the restart the new API server refuses
// their watches ("forbidden" until its authorizer has loaded RBAC) and every informer backs off,
// for up to ~30 s. Meanwhile kube-controller-manager's StatefulSet controller refuses sets whose
// informer is behind its own last write ("read version … is not as new as written version") and
// backs each off exponentially, up to 1000 s, so the next test's sets sat at 0/3 Ready with every
// pod Ready; and kube-scheduler, not yet seeing a cordon, placed a Pod on the cordoned node.
func (e *Env) RestartControllers(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	started := time.Now()
	// Their serving certificates are self-signed (--cert-dir); /healthz needs no credentials.
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} // #nosec G402 -- loopback health probe
	for _, c := range e.controllers {
		p, err := e.replaceController(c)
		if err != nil {
			return err
		}
		if err := poll(ctx, "restarted "+p.name+" "+c.healthz, p, 200*time.Millisecond, func() error {
			if err := httpOK(client, c.healthz); err != nil || c.ready == nil {
				return err
			}
			return c.ready(ctx)
		}); err != nil {
			return err
		}
	}
	e.logf("kube-controller-manager, kube-scheduler and kwok restarted and healthy in %s", time.Since(started).Round(100*time.Millisecond))
	return nil
}

// replaceController stops c's process and starts it again, as one step for keepRunning.
func (e *Env) replaceController(c *controller) (*process, error) {
	e.ctrlMu.Lock()
	defer e.ctrlMu.Unlock()
	c.proc.stop(10 * time.Second)
	c.runBeforeStart()
	c.restarts++
	p, err := e.restartProcess(c.proc, c.restarts, c.args)
	if err != nil {
		return nil, err
	}
	c.proc = p
	return p, nil
}

func (c *controller) runBeforeStart() {
	if c.beforeStart != nil {
		c.beforeStart()
	}
}

// kwokRestartHooks free the fake Nodes' leases before kwok starts again and wait until it holds
// them (freeNodeLeases).
func (e *Env) kwokRestartHooks() restartHooks {
	return restartHooks{beforeStart: e.freeNodeLeases, ready: e.nodeLeasesHeld}
}

// freeNodeLeases deletes the fake Nodes' leases before kwok starts again. A kubelet renews its
// Node's lease under the Node's own name at once after a restart; kwok takes a new identity per
// process, so the lease of the process that stopped would hold each Node for
// --node-lease-duration-seconds, and the Pods bound to it meanwhile are never played (kwok does
// not list them again when it takes the lease).
func (e *Env) freeNodeLeases() {
	if e.Client == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	leases := e.Client.CoordinationV1().Leases("kube-node-lease")
	if err := leases.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		e.logf("deleting the Node leases before kwok starts again: %v", err)
	}
}

// nodeLeasesHeld is nil once every Node has a lease again (kwok holds them).
func (e *Env) nodeLeasesHeld(ctx context.Context) error {
	if e.Client == nil {
		return nil
	}
	nodes, err := e.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, n := range nodes.Items {
		if _, err := e.Client.CoordinationV1().Leases("kube-node-lease").Get(ctx, n.Name, metav1.GetOptions{}); err != nil {
			return fmt.Errorf("Node %s's lease: %w", n.Name, err)
		}
	}
	return nil
}
