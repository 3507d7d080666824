package sim

import "fmt"

// Memgraph 3.12 texts (Memgraph v3.12.0 src/query/interpreter.cpp, CoordQueryHandler and
// HandleCoordinatorQuery). Kept verbatim, including Memgraph's own typos.
const (
	msgCoordinatorOnly  = "Coordinator can run only coordinator queries!"
	msgExplicitTx       = "Managing coordinators is not allowed in multicommand transactions. A multicommand transaction, also known as an explicit transaction, groups multiple commands into a single atomic operation. Instead, please use an implicit transaction, also known as an auto committing transaction, in order to execute this particularquery. For more details, visit https://memgraph.com/docs"
	msgForwardFailed    = "Request forwarded to the leader but leader failed with request processing! Check logs on the leader to find out what happened!"
	msgNoLeader         = "Tried to forward the request to the current leader but the leader couldn't be found!"
	msgRaftWriteFailed  = "Writing to Raft log failed. Please retry the operation."
	msgFailedConfigMap  = "Failed to parse config map!"
	msgOnlyLeaderYields = "Only the current leader can yield the leadership!"

	msgRegisterExactly3    = "Config map must contain exactly 3 entries: bolt_server, management_server and replication_server!"
	msgAddExactly3         = "Config map must contain exactly 3 entries: coordinator_server, bolt_server and  management_server!"
	msgUpdateExactly1      = "Config map must contain exactly 1 entry: bolt_server!"
	msgNameExists          = "Couldn't register replica instance since instance with such name already exists!"
	msgMgmtExists          = "Couldn't register replica instance since instance with such management server already exists!"
	msgReplExists          = "Couldn't register replica instance since instance with such replication endpoint already exists!"
	msgModeMix             = "Cluster cannot consists of both STRICT_SYNC and SYNC replicas. The valid cluster consists of either STRICT_SYNC and ASYNC or SYNC and ASYNC replicas."
	msgMainExists          = "Couldn't set instance to main since there is already a main instance in cluster!"
	msgNoSuchInstance      = "No instance with such name!"
	msgAliveMain           = "Alive main instance can't be unregistered! Shut it down to trigger failover and then unregister it!"
	msgCoordIDExists       = "Couldn't add coordinator since instance with such id already exists!"
	msgCoordMgmtExists     = "Couldn't add coordinator since instance with such management endpoint already exists!"
	msgCoordServerExists   = "Couldn't add coordinator since instance with such coordinator server already exists!"
	msgUpdateRaftFailed    = "Couldn't update config because appending to Raft log failed."
	msgSettingNameLiteral  = "Setting name should be a string literal"
	msgSettingValueLiteral = "Setting value should be a string literal"
	msgForceResetNotLeader = "Force reset failed since the instance is not leader anymore!"
	// msgLeaderExited never reaches a client (the process is gone before it answers); it is what
	// the query log records for a REMOVE COORDINATOR that hit Memgraph's LOG_FATAL.
	msgLeaderExited = "sim: the leader exited: Couldn't find coordinator in local application logs, there was a mistake when starting cluster."

	msgWriteOnReplica = "Write queries are forbidden on the replica instance. Replica instances accept only read queries, while the main instance accepts read and write queries. Please retry your query on the main instance."
	// msgWriteOnMain is WriteQueryOnMainException (src/query/exceptions.hpp 531–538).
	msgWriteOnMain        = "Write queries currently forbidden on the main instance. Either the cluster is in read-only mode, or a new main instance is being set up. Please retry the query later on if this is transient."
	msgShowReplicasOnRepl = "Show replicas query should only be run on the main instance."
	msgManualRegister     = "Can't register replica manually on instance with coordinator server port."
	msgManualDrop         = "Can't drop replica manually on instance with coordinator server port."
	msgManualSetRole      = "Can't set role manually on instance with coordinator server port."
)

// onlyCoordinator are the texts a data instance answers to coordinator queries (§3.2).
var onlyCoordinator = map[stmtKind]string{
	stShowInstances:           "Only coordinator can run SHOW INSTANCES.",
	stShowInstance:            "Only coordinator can run SHOW INSTANCE query.",
	stRegisterInstance:        "Only coordinator can register coordinator server!",
	stSetInstanceToMain:       "Only coordinator can register coordinator server!",
	stUnregisterInstance:      "Only coordinator can unregister instance!",
	stDemoteInstance:          "Only coordinator can demote instance!",
	stAddCoordinator:          "Only coordinator can add coordinator instance!",
	stRemoveCoordinator:       "Only coordinator can remove coordinator instance!",
	stForceReset:              "Only coordinator can force reset cluster!",
	stUpdateConfigInstance:    "Only coordinator can update config!",
	stUpdateConfigCoordinator: "Only coordinator can update config!",
	stYieldLeadership:         "Only coordinator can run YIELD LEADERSHIP query.",
	stSetCoordinatorSetting:   "Only coordinator can run SET COORDINATOR SETTING query.",
	stShowCoordinatorSettings: "Only coordinator can run SHOW COORDINATOR SETTINGS query.",
	stShowReplicationLag:      "Only coordinator can run SHOW REPLICATION LAG query.",
}

func msgMissingEntry(key string) string {
	return fmt.Sprintf("Config map must contain %s entry!", key)
}

func msgInvalidAddress(kind string) string {
	return fmt.Sprintf("Invalid %s socket address. The socket address must be a string defining the address and port, delimited by a single colon. The address must be valid and the port must be an integer.", kind)
}

func msgAlreadyReplica(name string) string {
	return fmt.Sprintf("Instance %s is already a replica!", name)
}

func msgDiffNetworkConfig(id int64) string {
	return fmt.Sprintf("Request for adding coordinator %d failed because the coordinator was started with different network configuration. Check logs for more details.", id)
}

func msgAddTimeout(id int64) string {
	return fmt.Sprintf("Request for adding coordinator %d reached a timeout!", id)
}

func msgRemoveLeader(id int64) string {
	return fmt.Sprintf("Request for removing coordinator %d failed because the current leader cannot be removed!", id)
}

func msgNoSuchCoordinator(id int64) string {
	return fmt.Sprintf("Couldn't remove coordinator instance because coordinator with id %d doesn't exist!", id)
}

func msgUpdateNoCoordinator(id int64) string {
	return fmt.Sprintf("Couldn't update config for the coordinator %d because it doesn't exist!", id)
}

func msgUpdateNoInstance(name string) string {
	return fmt.Sprintf("Couldn't update config for the repl instance %s because it doesn't exist!", name)
}

func msgNoSuchSetting(name string) string {
	return fmt.Sprintf("Setting %s doesn't exist on coordinators.", name)
}

func msgInvalidSetting(name string) string {
	return fmt.Sprintf("Invalid argument detected while trying to update setting %s", name)
}

// Notification texts (INFO, in the PULL summary).
func noteAddCoordinator(id int64, coordServer string) map[string]any {
	return info("AddCoordinatorInstance", fmt.Sprintf("Added coordinator with id %d and coordinator server %s.", id, coordServer))
}

func noteRegister(bolt, name string) map[string]any {
	return info("RegisterReplicationInstance", fmt.Sprintf("Coordinator has registered replication instance on %s for instance %s.", bolt, name))
}

func noteUnregister(name string) map[string]any {
	return info("UnregisterInstance", fmt.Sprintf("Coordinator has unregistered instance %s.", name))
}

func noteDemote(name string) map[string]any {
	return info("DemoteInstanceToReplica", fmt.Sprintf("Coordinator has demoted instance to replica %s.", name))
}

func noteRemoveCoordinator(id int64) map[string]any {
	return info("RemoveCoordinatorInstance", fmt.Sprintf("Coordinator %d has been removed.", id))
}

func noteUpdateInstance(addr, name string) map[string]any {
	return info("UpdateConfig", fmt.Sprintf("Coordinator has updated bolt server to %s for instance %s.", addr, name))
}

func noteUpdateCoordinator(addr string, id int64) map[string]any {
	return info("UpdateConfig", fmt.Sprintf("Coordinator has updated bolt server to %s for coordinator %d.", addr, id))
}

func noteYield() map[string]any {
	return info("YieldLeadership", "The coordinator has tried to yield the current leadership.")
}

func noteForceReset() map[string]any {
	return info("ReconcileClusterState", "Coordinator has force reset cluster state.")
}

// info builds a notification as Memgraph's Notification::ConvertToMap does.
func info(code, title string) map[string]any {
	return map[string]any{"severity": "INFO", "code": code, "title": title, "description": ""}
}
