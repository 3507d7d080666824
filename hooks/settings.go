package hooks

import (
	"context"
	"fmt"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
)

// settingsOnto runs the settings stage on a converged pass whose other stages wrote nothing, and
// adds what it did to out.Settings (not out.Execution: a refused setting is the CoordinatorSettings
// condition's, not a failed registration of Converged): SHOW COORDINATOR SETTINGS on the leader the pass's view names, then,
// unless a dry run, SET COORDINATOR SETTING for each declared setting it shows otherwise
// (planner.PlanSettings), through the executor. A spec that declares no setting costs no query.
// A pass that wrote leaves the settings to the next one, which plans on the cluster its writes
// made; a SET on a coordinator that is no longer leader fails as a Raft write and waits, too.
func (h *handler) settingsOnto(ctx context.Context, conn memgraph.Connector, in *passInput, out *planner.Outcome) {
	if !planner.SettingsDeclared(in.declared) || len(out.Execution.Writes) > 0 || ctx.Err() != nil {
		return
	}
	view := out.Latest
	if view.Leader == "" {
		view = out.Discovery.View
	}
	leader, err := planner.LeaderOf(in.declared, view)
	out.Settings.Ran = true
	if err != nil {
		out.Settings.ReadErr = err
		return
	}
	client := conn.Client(leader.BoltServer)
	shown, err := client.ShowCoordinatorSettings(ctx)
	if err != nil {
		out.Settings.ReadErr = fmt.Errorf("%s: %w", leader.Name, err)
		return
	}
	out.Settings.Step = planner.PlanSettings(in.declared.Settings, shown)
	if in.dryRun || len(out.Settings.Step.Commands) == 0 {
		return
	}
	x := executor{client: client, declared: in.declared, current: in.obs.current, workloads: in.workloads,
		log: h.log, count: h.countCommand}
	out.Settings.Execution = x.execute(ctx, out.Settings.Step.Commands)
}
