package memgraph

import (
	"strconv"
	"strings"
)

// Queries without arguments, exactly as sent.
const (
	ShowInstancesQuery      = "SHOW INSTANCES"
	ShowReplicationLagQuery = "SHOW REPLICATION LAG"
	YieldLeadershipQuery    = "YIELD LEADERSHIP"
	// ForceResetClusterStateQuery makes the leader reconcile the cluster (Memgraph v3.12.0
	// coordinator_instance.cpp 386–538): with a MAIN in Raft (even a dead one) it just rebuilds
	// its health checks; with none it fails over to the most up-to-date alive replica. The leader is not ready meanwhile, and the
	// query does not return until the reconciliation succeeds or the leadership is lost.
	ForceResetClusterStateQuery = "FORCE RESET CLUSTER STATE"
)

// Limits of our validation. Kubernetes names are at most 253 characters; instance names are
// derived from them, so the same bound is generous.
const (
	maxNameLength = 253
	maxHostLength = 253
)

// The *Query functions render exactly the text the Client sends, so the planner can print it.
// Rendering is injection-safe for any input (names are back-quoted with doubled back-quotes when
// they are not plain identifiers, values are escaped string literals), but only validated input
// is ever sent: the Client calls the matching Validate* function first and returns its
// KindInvalidArgument *Error without touching the network.

// AddCoordinatorQuery renders ADD COORDINATOR. Validate with ValidateCoordinator.
func AddCoordinatorQuery(id int, cfg CoordinatorConfig) string {
	return "ADD COORDINATOR " + strconv.Itoa(id) + " WITH CONFIG " + renderConfigMap(coordinatorEntries(cfg))
}

// RegisterInstanceQuery renders REGISTER INSTANCE, with cfg.Mode's AS clause (none for SYNC).
// Validate with ValidateInstance.
func RegisterInstanceQuery(name string, cfg InstanceConfig) string {
	return "REGISTER INSTANCE " + quoteName(name) + cfg.Mode.asClause() + " WITH CONFIG " + renderConfigMap(instanceEntries(cfg))
}

// SetInstanceToMainQuery renders SET INSTANCE … TO MAIN. Validate with ValidateInstanceName.
func SetInstanceToMainQuery(name string) string {
	return "SET INSTANCE " + quoteName(name) + " TO MAIN"
}

// DemoteInstanceQuery renders DEMOTE INSTANCE. Validate with ValidateInstanceName.
func DemoteInstanceQuery(name string) string {
	return "DEMOTE INSTANCE " + quoteName(name)
}

// UnregisterInstanceQuery renders UNREGISTER INSTANCE. Validate with ValidateInstanceName.
func UnregisterInstanceQuery(name string) string {
	return "UNREGISTER INSTANCE " + quoteName(name)
}

// RemoveCoordinatorQuery renders REMOVE COORDINATOR. Validate with ValidateCoordinatorID.
func RemoveCoordinatorQuery(id int) string {
	return "REMOVE COORDINATOR " + strconv.Itoa(id)
}

// ValidateCoordinator checks ADD COORDINATOR's arguments.
func ValidateCoordinator(id int, cfg CoordinatorConfig) error {
	if err := ValidateCoordinatorID(id); err != nil {
		return err
	}
	return validateEntries(coordinatorEntries(cfg))
}

// ValidateInstance checks REGISTER INSTANCE's arguments.
func ValidateInstance(name string, cfg InstanceConfig) error {
	if err := ValidateInstanceName(name); err != nil {
		return err
	}
	switch cfg.Mode {
	case ModeSync, ModeAsync, ModeStrictSync:
	default:
		return invalidArgument("replication mode %q is none of SYNC (\"\"), ASYNC and STRICT_SYNC", string(cfg.Mode))
	}
	return validateEntries(instanceEntries(cfg))
}

func coordinatorEntries(cfg CoordinatorConfig) []configEntry {
	return []configEntry{
		{"bolt_server", cfg.BoltServer},
		{"coordinator_server", cfg.CoordinatorServer},
		{"management_server", cfg.ManagementServer},
	}
}

func instanceEntries(cfg InstanceConfig) []configEntry {
	return []configEntry{
		{"bolt_server", cfg.BoltServer},
		{"management_server", cfg.ManagementServer},
		{"replication_server", cfg.ReplicationServer},
	}
}

// configEntry keeps the key order stable, so the rendered query is deterministic.
type configEntry struct{ key, value string }

func renderConfigMap(entries []configEntry) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, e := range entries {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quoteString(e.key))
		b.WriteString(": ")
		b.WriteString(quoteString(e.value))
	}
	b.WriteByte('}')
	return b.String()
}

// quoteString renders s as a single-quoted Cypher string literal. Validation already limits
// addresses to a safe alphabet; escaping is still complete so the function is safe on its own:
// backslash, both quotes and control characters are escaped per the openCypher EscapeSequence.
func quoteString(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('\'')
	for _, r := range s {
		switch r {
		case '\\':
			b.WriteString(`\\`)
		case '\'':
			b.WriteString(`\'`)
		case '"':
			b.WriteString(`\"`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 || r == 0x7f {
				b.WriteString(`\u`)
				hex := strconv.FormatInt(int64(r), 16)
				b.WriteString(strings.Repeat("0", 4-len(hex)))
				b.WriteString(hex)
				continue
			}
			b.WriteRune(r)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

// ValidateCoordinatorID checks a coordinator id.
func ValidateCoordinatorID(id int) error {
	// Memgraph reads the id with ValueInt and NuRaft server ids are int32; coordinator ids in
	// Memgraph and its Helm chart start at 1.
	if id < 1 || id > 1<<31-1 {
		return invalidArgument("coordinator id %d is out of range (1..2147483647)", id)
	}
	return nil
}

func validateEntries(entries []configEntry) error {
	for _, e := range entries {
		if err := ValidateAddress(e.value); err != nil {
			return invalidArgument("%s: %s", e.key, err.(*Error).Message)
		}
	}
	return nil
}

// ValidateAddress checks that address is "host:port" as Memgraph's endpoint parser accepts it:
// exactly one colon (so no IPv6 literal), a host of letters, digits, '-', '.' and '_', and a
// decimal port 1..65535. Invalid input yields a KindInvalidArgument *Error.
func ValidateAddress(address string) error {
	host, port, ok := strings.Cut(address, ":")
	if !ok || strings.Contains(port, ":") {
		return invalidArgument("address %q must be host:port with exactly one colon", address)
	}
	if host == "" || len(host) > maxHostLength {
		return invalidArgument("address %q has an empty or over-long host", address)
	}
	for _, r := range host {
		if !isHostRune(r) {
			return invalidArgument("address %q: host may contain only letters, digits, '-', '.' and '_'", address)
		}
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 || port != strconv.Itoa(n) {
		return invalidArgument("address %q: port must be a decimal number 1..65535", address)
	}
	return nil
}

func isHostRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
		r == '-' || r == '.' || r == '_'
}

// ValidateInstanceName checks a data-instance name: 1..253 characters of letters, digits, '_',
// '-' and '.'. That covers Memgraph's own names (instance_1) and names derived from Kubernetes
// objects (memgraph-data-0); anything else is refused rather than escaped.
func ValidateInstanceName(name string) error {
	if name == "" || len(name) > maxNameLength {
		return invalidArgument("instance name %q must be 1..%d characters", name, maxNameLength)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return invalidArgument("instance name %q may contain only letters, digits, '_', '-' and '.'", name)
		}
	}
	return nil
}

// quoteName renders name as a symbolic name: bare when it is a plain identifier that is not a
// keyword, back-quoted otherwise with inner back-quotes doubled (Memgraph strips the quotes, so
// SHOW INSTANCES reports the name without them).
func quoteName(name string) string {
	if isBareIdentifier(name) && !cypherKeywords[strings.ToUpper(name)] {
		return name
	}
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

func isBareIdentifier(s string) bool {
	for i, r := range s {
		letter := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '_'
		digit := r >= '0' && r <= '9'
		if !letter && !(digit && i > 0) {
			return false
		}
	}
	return s != ""
}

// cypherKeywords are words that would parse as a keyword rather than a name in the coordinator
// grammar or openCypher; names equal to one (case-insensitively) are back-quoted.
var cypherKeywords = func() map[string]bool {
	words := strings.Fields(`ADD ALL AND AS ASC ASCENDING ASYNC BY CALL CASE CLUSTER CONFIG
		CONTAINS COORDINATOR COUNT CREATE DELETE DEMOTE DESC DESCENDING DETACH DISTINCT ELSE END
		ENDS EXISTS FALSE FOR FORCE FROM IN INSTANCE INSTANCES IS LAG LEADERSHIP LIMIT MAIN MATCH
		MERGE NOT NULL ON OPTIONAL OR ORDER REGISTER REMOVE REPLICA REPLICATION RESET RETURN SET
		SETTING SETTINGS SHOW SKIP STARTS STATE STRICT_SYNC SYNC THEN TO TRUE UNION UNREGISTER
		UNWIND UPDATE WHEN WHERE WITH XOR YIELD`)
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}()
