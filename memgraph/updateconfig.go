package memgraph

import "strconv"

// UPDATE CONFIG changes one registered member's bolt_server in place (Memgraph v3.12.0
// MemgraphCypher.g4 683: `UPDATE CONFIG FOR ( INSTANCE instanceName | COORDINATOR
// coordinatorServerId ) configMap`). The map must hold exactly one entry, bolt_server
// (interpreter.cpp 2217–2270): no other address can change without unregistering. The leader
// appends the change to Raft and nothing else happens (coordinator_instance.cpp 1677–1757): the
// member stays up, and the bolt_server is only what SHOW INSTANCES reports and what the
// coordinators hand routing clients (coordination/utils.hpp CreateRoutingTable).

// UpdateInstanceConfigQuery renders UPDATE CONFIG FOR INSTANCE. Validate with
// ValidateInstanceName and ValidateAddress.
func UpdateInstanceConfigQuery(name, boltServer string) string {
	return "UPDATE CONFIG FOR INSTANCE " + quoteName(name) + " " + renderConfigMap(boltEntry(boltServer))
}

// UpdateCoordinatorConfigQuery renders UPDATE CONFIG FOR COORDINATOR. Validate with
// ValidateCoordinatorID and ValidateAddress.
func UpdateCoordinatorConfigQuery(id int, boltServer string) string {
	return "UPDATE CONFIG FOR COORDINATOR " + strconv.Itoa(id) + " " + renderConfigMap(boltEntry(boltServer))
}

// ValidateUpdateInstanceConfig checks UPDATE CONFIG FOR INSTANCE's arguments.
func ValidateUpdateInstanceConfig(name, boltServer string) error {
	if err := ValidateInstanceName(name); err != nil {
		return err
	}
	return validateEntries(boltEntry(boltServer))
}

// ValidateUpdateCoordinatorConfig checks UPDATE CONFIG FOR COORDINATOR's arguments.
func ValidateUpdateCoordinatorConfig(id int, boltServer string) error {
	if err := ValidateCoordinatorID(id); err != nil {
		return err
	}
	return validateEntries(boltEntry(boltServer))
}

func boltEntry(boltServer string) []configEntry { return []configEntry{{"bolt_server", boltServer}} }
