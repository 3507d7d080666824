package env

import (
	"context"
	"crypto/tls"
	"net/http"
	"time"
)

// controller is a control-plane process that watches the API server through informers: what it
// runs with, and where it says it is healthy.
type controller struct {
	proc     *process
	args     []string
	healthz  string
	restarts int
}

func (e *Env) startController(name, healthz string, args []string) error {
	p, err := e.start(name, args...)
	if err != nil {
		return err
	}
	e.controllers = append(e.controllers, &controller{proc: p, args: args, healthz: healthz})
	return nil
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
		c.proc.stop(10 * time.Second)
		c.restarts++
		p, err := e.restartProcess(c.proc, c.restarts, c.args)
		if err != nil {
			return err
		}
		c.proc = p
		if err := poll(ctx, "restarted "+p.name+" "+c.healthz, p, 200*time.Millisecond, func() error {
			return httpOK(client, c.healthz)
		}); err != nil {
			return err
		}
	}
	e.logf("kube-controller-manager, kube-scheduler and kwok restarted and healthy in %s", time.Since(started).Round(100*time.Millisecond))
	return nil
}
