// Package memgraph is the only door to Memgraph: what a Memgraph 3.12 HA cluster's coordinators
// answer (SHOW INSTANCES rows, replication lag) and its MAIN (SHOW REPLICAS), how they refuse
// (Error and its Kind), the exact queries the hook sends and the validation in front of them, the
// Client and Connector interfaces that run them (with TLS and credentials), and the Memgraph
// version an image names. It is free of any Bolt driver, so the pure core (planner) can use its
// types: memgraph/bolt is the Connector that speaks Bolt through the neo4j driver, and
// memgraph/sim a simulator of a whole HA cluster that speaks real Bolt.
package memgraph

import "context"

// Health values of SHOW INSTANCES.
const (
	HealthUp      = "up"
	HealthDown    = "down"
	HealthUnknown = "unknown"
)

// Role values of SHOW INSTANCES.
const (
	RoleLeader   = "leader"
	RoleFollower = "follower"
	RoleMain     = "main"
	RoleReplica  = "replica"
	RoleUnknown  = "unknown"
)

// Instance is one row of SHOW INSTANCES.
type Instance struct {
	Name              string
	BoltServer        string
	CoordinatorServer string // "" for data instances
	ManagementServer  string
	Health            string
	Role              string
	LastSuccRespMs    int64
}

// IsCoordinator reports whether the row describes a coordinator (they have a coordinator_server).
func (i Instance) IsCoordinator() bool { return i.CoordinatorServer != "" }

// Registered reports whether the row's member is registered with the coordinators: a data
// instance is listed only once REGISTER INSTANCE added it, while a coordinator lists itself
// before anyone ADDed it (a fresh one, leader of itself) and so does a half-joined member, both
// with an empty bolt_server. Only ADD COORDINATOR sets it.
func (i Instance) Registered() bool { return !i.IsCoordinator() || i.BoltServer != "" }

// DatabaseLag is one database's entry in SHOW REPLICATION LAG's data_info.
type DatabaseLag struct {
	CommittedTxns  int64
	TxnsBehindMain int64
}

// InstanceLag is one row of SHOW REPLICATION LAG.
type InstanceLag struct {
	Instance  string
	Databases map[string]DatabaseLag
}

// CoordinatorConfig is the config map of ADD COORDINATOR.
type CoordinatorConfig struct {
	BoltServer        string
	CoordinatorServer string
	ManagementServer  string
}

// InstanceConfig is the config map of REGISTER INSTANCE and its replication mode.
type InstanceConfig struct {
	BoltServer        string
	ManagementServer  string
	ReplicationServer string
	Mode              ReplicationMode
}

// Client runs queries against one Memgraph instance, each as an auto-commit query whose result
// is fully consumed. ShowInstances, ShowReplicationLag and the Raft writes are coordinator
// queries, for a Client of a coordinator's address; the others go to a data instance. Every
// method is bounded by ctx and answers in a time that does not grow with the data: the queries
// that do (snapshots, recovery) are SnapshotClient's, which only the backup agent uses. Errors
// are *Error values.
type Client interface {
	ShowInstances(ctx context.Context) ([]Instance, error)
	ShowReplicationLag(ctx context.Context) ([]InstanceLag, error)
	// ShowReplicas is a read for a Client of the MAIN's bolt_server, listing the replicas it
	// replicates to and each database's state. A REPLICA refuses it with KindNotMain, a
	// coordinator with KindNotCoordinator.
	ShowReplicas(ctx context.Context) ([]Replica, error)
	AddCoordinator(ctx context.Context, id int, cfg CoordinatorConfig) error
	RegisterInstance(ctx context.Context, name string, cfg InstanceConfig) error
	SetInstanceToMain(ctx context.Context, name string) error
	DemoteInstance(ctx context.Context, name string) error
	UnregisterInstance(ctx context.Context, name string) error
	RemoveCoordinator(ctx context.Context, id int) error
	// UpdateInstanceConfig and UpdateCoordinatorConfig change a registered member's bolt_server
	// in place (UPDATE CONFIG): what SHOW INSTANCES reports and routing clients are given.
	UpdateInstanceConfig(ctx context.Context, name, boltServer string) error
	UpdateCoordinatorConfig(ctx context.Context, id int, boltServer string) error
	YieldLeadership(ctx context.Context) error
	ForceResetClusterState(ctx context.Context) error
	ShowCoordinatorSettings(ctx context.Context) ([]Setting, error)
	SetCoordinatorSetting(ctx context.Context, name, value string) error
}

// UserClient is a Client that also manages users and roles, for a Client of the MAIN data
// instance (users.go): the reads, and RunAuth, which sends one auth statement, never retried; its
// errors show the statement's Text, never its password.
type UserClient interface {
	Client
	ShowUsers(ctx context.Context) ([]string, error)
	ShowRoles(ctx context.Context) ([]RoleInfo, error)
	ShowPrivileges(ctx context.Context, t AuthTarget, database string) ([]PrivilegeRow, error)
	ShowRolesForUser(ctx context.Context, user string) ([]string, error)
	ShowDatabasePrivileges(ctx context.Context, t AuthTarget) (DatabaseAccess, error)
	RunAuth(ctx context.Context, s AuthStatement) error
}

// Connector hands out Clients for Bolt addresses ("host:port" as declared or as reported in
// SHOW INSTANCES): coordinators', and a MAIN data instance's for ShowReplicas. Implementations
// pool connections per address.
type Connector interface {
	Client(address string) Client
}

// Resolver maps an advertised "host:port" to the "host:port" to dial (identity in a cluster;
// a port-forward or a simulator outside one).
type Resolver interface {
	Resolve(address string) string
}
