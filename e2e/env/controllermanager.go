package env

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// RestartControllerManager stops kube-controller-manager and starts it again with the same flags
// — what a control-plane upgrade does after the API server — and returns once it serves
// /healthz. The restarted process lists every object afresh and its work queues hold no failures.
//
// Why a suite needs it after RestartAPIServer: for the ~20 s its informers take to come back, the
// controller manager's StatefulSet controller refuses to act on a set whose informer is behind
// its own last write ("read version … is not as new as written version"), and every refusal
// backs that set off exponentially, up to 1000 s. A set created in that window (the next test's)
// can then sit with a stale status for minutes after every pod is Ready.
func (e *Env) RestartControllerManager(ctx context.Context) error {
	started := time.Now()
	e.controllerManager.stop(10 * time.Second)
	e.controllerRestarts++
	p, err := e.restartProcess(e.controllerManager, e.controllerRestarts, e.controllerManagerArgs)
	if err != nil {
		return err
	}
	e.controllerManager = p
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	// Its serving certificate is self-signed (--cert-dir); /healthz needs no credentials.
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} // #nosec G402 -- loopback health probe
	url := "https://127.0.0.1:" + strconv.Itoa(e.controllerManagerPort) + "/healthz"
	err = poll(ctx, "restarted kube-controller-manager /healthz", p, 200*time.Millisecond, func() error {
		resp, err := client.Get(url)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	})
	e.logf("kube-controller-manager restarted and healthy in %s", time.Since(started).Round(100*time.Millisecond))
	return err
}
