package hooks

import (
	"context"
	"fmt"

	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
)

// settings is the settings stage, for a converged pass whose other stages wrote nothing; what it
// returns is the outcome's Settings (not its Execution: a refused setting is the
// CoordinatorSettings condition's, not a failed registration of Converged): SHOW COORDINATOR
// SETTINGS on the leader view names, then,
// unless a dry run, SET COORDINATOR SETTING for each declared setting it shows otherwise
// (planner.PlanSettings), through the executor. A spec that declares no setting costs no query.
// A pass that wrote leaves the settings to the next one, which plans on the cluster its writes
// made; a SET on a coordinator that is no longer leader fails as a Raft write and waits, too.
func (h *handler) settings(ctx context.Context, conn memgraph.Connector, in *passInput, view planner.View) planner.SettingsOutcome {
	if !planner.SettingsDeclared(in.declared) {
		return planner.SettingsOutcome{}
	}
	leader, err := planner.LeaderOf(in.declared, view)
	if err != nil {
		return planner.SettingsOutcome{Ran: true, ReadErr: err}
	}
	client := in.sent.client(conn.Client(leader.BoltServer))
	shown, err := client.ShowCoordinatorSettings(ctx)
	if err != nil {
		return planner.SettingsOutcome{Ran: true, ReadErr: fmt.Errorf("%s: %w", leader.Name, err)}
	}
	got := planner.SettingsOutcome{Ran: true, Step: planner.PlanSettings(in.declared.Settings, shown)}
	if in.dryRun || len(got.Step.Commands) == 0 {
		return got
	}
	got.Execution = in.executor(client, catchUpReader{}, h.log).execute(ctx, got.Step.Commands)
	return got
}
