package planner

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// Writes are the Bolt writes running cmd sent, by kind and member, given the error it returned
// (nil: it succeeded): what status.lastOperation lists. A handover sends DEMOTE, then SET of the
// new MAIN unless the DEMOTE failed, then SET of the old MAIN when a refusal proved that no MAIN
// was set (HandoverError.RestoreTried).
func Writes(cmd Command, err error) []string {
	switch c := cmd.(type) {
	case AddCoordinator:
		return []string{"ADD " + topology.CoordinatorName(c.ID)}
	case RegisterInstance:
		return []string{"REGISTER " + c.Name}
	case SetInstanceToMain:
		return []string{setMain(c.Name)}
	case Handover:
		writes := []string{"DEMOTE " + c.From}
		var he *HandoverError
		switch {
		case err == nil:
			writes = append(writes, setMain(c.To))
		case errors.As(err, &he):
			writes = append(writes, setMain(c.To))
			if he.RestoreTried {
				writes = append(writes, setMain(c.From))
			}
		}
		return writes
	case UnregisterInstance:
		return []string{"UNREGISTER " + c.Name}
	case RemoveCoordinator:
		return []string{"REMOVE " + topology.CoordinatorName(c.ID)}
	case ForceResetClusterState:
		return []string{"FORCE RESET CLUSTER STATE"}
	case YieldLeadership:
		return []string{"YIELD LEADERSHIP"}
	case SetCoordinatorSetting:
		return []string{"SET " + c.Name + " TO " + c.Value}
	case UpdateInstanceConfig:
		return []string{"UPDATE " + c.Name + " bolt_server TO " + c.BoltServer}
	case UpdateCoordinatorConfig:
		return []string{"UPDATE " + topology.CoordinatorName(c.ID) + " bolt_server TO " + c.BoltServer}
	}
	return []string{cmd.String()}
}

func setMain(name string) string { return "SET " + name + " TO MAIN" }

// maxWritesListed bounds status.lastOperation.writes: a pass registering a hundred instances lists
// the first ones and how many more.
const maxWritesListed = 12

// LastOperation is status.lastOperation for a pass whose execution was ex, out of planned steps:
// its writes, how they ended and, when they did not succeed, the message that says why
// (Memgraph's own for a refusal). nil when the pass wrote nothing: the prior record stands. The
// caller stamps the time.
func LastOperation(ex Execution, planned int) *v1alpha1.Operation {
	if len(ex.Writes) == 0 {
		return nil
	}
	op := &v1alpha1.Operation{Writes: listWrites(ex.Writes), Result: v1alpha1.OperationSucceeded}
	switch stop := ex.Stopped; {
	case stop != nil && stop.Verdict == StepFailed:
		op.Result, op.Message = v1alpha1.OperationFailed, bound(Explain(stop.Err))
	case stop != nil:
		op.Result, op.Message = v1alpha1.OperationInterrupted, bound(Explain(stop.Err))
	case ex.BudgetExhausted:
		op.Result = v1alpha1.OperationInterrupted
		op.Message = fmt.Sprintf("the sync budget ran out after %d of %d steps; the next sync continues", len(ex.Ran), planned)
	}
	return op
}

func listWrites(writes []string) string {
	if len(writes) <= maxWritesListed {
		return strings.Join(writes, "; ")
	}
	return strings.Join(writes[:maxWritesListed], "; ") + "; and " + strconv.Itoa(len(writes)-maxWritesListed) + " more"
}
