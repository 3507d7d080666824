package main

import (
	"fmt"
	"log/slog"

	"github.com/memgraph-hooks/memgraph-hooks/examples"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// startSimulation starts one simulated Memgraph instance per member of the example cluster, each
// answering at the member's FQDN through the world's resolver. The instances start fresh, as
// pods of a newly applied cluster do: the first sync registers them.
func startSimulation(logger *slog.Logger) (*sim.World, error) {
	raw, err := examples.MinimalClusterIn("default")
	if err != nil {
		return nil, fmt.Errorf("reading the embedded example cluster: %w", err)
	}
	cluster, err := topology.Admit(raw)
	if err != nil {
		return nil, fmt.Errorf("admitting the embedded example cluster: %w", err)
	}
	n := cluster.Network()
	declared := cluster.Declare(topology.Replicas{})
	world := sim.NewWorld()
	for _, c := range declared.Coordinators {
		err := world.StartCoordinator(sim.CoordinatorSpec{
			ID: c.ID(), Host: c.Host, BoltPort: n.Ports.Bolt, ManagementPort: n.Ports.Management, CoordinatorPort: n.Ports.Coordinator,
		})
		if err != nil {
			world.Close()
			return nil, err
		}
		logger.Info("simulated coordinator", "name", c.Name, "bolt", c.BoltServer, "dial", world.Resolve(c.BoltServer))
	}
	for _, d := range declared.DataInstances {
		if err := world.StartData(sim.DataSpec{Host: d.Host, BoltPort: n.Ports.Bolt, ManagementPort: n.Ports.Management}); err != nil {
			world.Close()
			return nil, err
		}
		logger.Info("simulated data instance", "name", d.Name, "bolt", d.BoltServer, "dial", world.Resolve(d.BoltServer))
	}
	return world, nil
}
