package v1alpha1

// The names the hook sets on every child and pod, which a spec therefore may not set itself
// (validatePodOptions): the selector labels and the pods' environment.

// Labels on every child and pod. The selector subset (name, instance, component) never changes
// for the life of a cluster, because a StatefulSet's selector is immutable; user labels and
// managed-by go on metadata only.
const (
	LabelName      = "app.kubernetes.io/name"
	LabelInstance  = "app.kubernetes.io/instance"
	LabelComponent = "app.kubernetes.io/component"
	LabelManagedBy = "app.kubernetes.io/managed-by"
)

// Environment the pods get. Memgraph reads its five HA settings (management port, coordinator
// port, coordinator id, NuRaft log file, coordinator hostname) from MEMGRAPH_* variables as one
// group: once any is set, all five come from the environment and the flags are ignored. So a
// coordinator sets all five and a data instance sets only the management port; the identity
// therefore comes from the pod itself and every pod of a role shares one template.
const (
	EnvPodName             = "POD_NAME"
	EnvLicense             = "MEMGRAPH_ENTERPRISE_LICENSE"
	EnvOrganization        = "MEMGRAPH_ORGANIZATION_NAME"
	EnvManagementPort      = "MEMGRAPH_MANAGEMENT_PORT"
	EnvCoordinatorPort     = "MEMGRAPH_COORDINATOR_PORT"
	EnvCoordinatorID       = "MEMGRAPH_COORDINATOR_ID"
	EnvNuRaftLogFile       = "MEMGRAPH_NURAFT_LOG_FILE"
	EnvCoordinatorHostname = "MEMGRAPH_COORDINATOR_HOSTNAME"
	EnvBoltPort            = "MEMGRAPH_BOLT_PORT"
)
