package hooks

import (
	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// What this sync renders into the pod templates besides the spec, and what the rollout learns of
// where the templates come from (planner.NextTemplateRecord, planner.NextAgentPin decide).

// provenance is where each role's pod template comes from: the record its StatefulSet carries and
// the stamps of the template observed and of the one this sync renders; coordinators first.
func (o *observation) provenance(c *topology.Cluster) [2]planner.TemplateProvenance {
	stamps := c.TemplateStamps(o.certificateRecord().Restart)
	var out [2]planner.TemplateProvenance
	for i := range out {
		out[i] = planner.TemplateProvenance{Observed: o.records[i], ObservedStamps: o.stamps[i], Stamps: stamps}
	}
	return out
}

// agentPin is the backup agent's image the data pods' template carries in this sync.
func (p *admittedParent) agentPin(o *observation) topology.AgentPin {
	return planner.NextAgentPin(o.agent, p.agentImage, o.provenance(p.cluster)[1].Restarting())
}
