package sim

import (
	"fmt"
	"sync"
	"testing"
)

// Several worlds at once, each with clients hammering every coordinator while faults are
// injected; run under -race. Every answer must be a well-formed table or a Memgraph text, and
// each cluster must end with exactly one MAIN.
func TestConcurrentWorldsAndClients(t *testing.T) {
	const worlds, clientsPerWorld, rounds = 3, 6, 15
	var wg sync.WaitGroup
	errs := make(chan error, worlds*clientsPerWorld*rounds)
	for range worlds {
		w, _ := setupCluster(t, 3, 3)
		clients := make([]*client, 3)
		for id := 1; id <= 3; id++ {
			clients[id-1] = dial(t, w, coordBolt(id))
			// neo4j-go-driver v5.28.4 lazily sets Connector.SupplyConnection on the first dial
			// without synchronisation (connector.go:55); one serial query keeps -race quiet.
			clients[id-1].must("SHOW INSTANCE")
		}
		for g := range clientsPerWorld {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := clients[g%3]
				for r := range rounds {
					var out outcome
					switch r % 3 {
					case 0:
						out = c.run("SHOW INSTANCES", nil)
						if out.err == nil && len(out.rows) != 6 {
							errs <- fmt.Errorf("SHOW INSTANCES returned %d rows", len(out.rows))
						}
					case 1:
						out = c.run(registerQuery(1), nil) // always refused: name exists
						if out.err == nil {
							errs <- fmt.Errorf("duplicate registration succeeded")
						}
					case 2:
						out = c.run("SHOW REPLICATION LAG", nil)
					}
					if out.err != nil && out.err.Code != codeClient {
						errs <- fmt.Errorf("unexpected failure %s %s", out.err.Code, out.err.Msg)
					}
				}
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				for _, f := range []func() error{
					func() error { return w.Commit("memgraph", 1) },
					func() error { return w.Kill("data-3.mg.svc") },
					func() error { return w.Restart("data-3.mg.svc") },
					func() error { return w.SetLag("data-2.mg.svc", "memgraph", 1) },
				} {
					if err := f(); err != nil {
						errs <- err
					}
				}
				_ = w.Raft()
				_ = w.Queries()
			}
		}()
		t.Cleanup(func() {
			snap := w.Raft()
			if len(snap.Clusters) != 1 || snap.Clusters[0].Main != "instance_1" {
				t.Errorf("final raft %+v", snap)
			}
			if m := w.Misuses(); len(m) != 0 {
				t.Errorf("misuses %+v", m)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
