package v1alpha1

// Coordinator settings Memgraph 3.12 takes but cannot run with. SetCoordinatorSetting parses
// both timings as any uint32, 0 included, and commits the value to the Raft log
// (coordinator_instance.cpp 1081–1149):
//
//   - instance_health_check_frequency_sec 0 stops the leader's health checks (a zero interval
//     makes its scheduler wait forever: utils/scheduler.cpp 46–49, 131–135), so no failover
//     happens; every coordinator that later starts a health check — a new leader (or FORCE
//     RESET CLUSTER STATE) reconciling the registered data instances, or REGISTER INSTANCE —
//     aborts on MG_ASSERT(frequency > 0) (replication_instance_client.cpp 60–66;
//     coordinator_instance.cpp 133–147, 437–482, 732–828). The
//     value stays in the Raft log, so each restarted coordinator that wins the election aborts
//     again until the coordinators' Raft data is wiped.
//   - instance_down_timeout_sec 0 marks an instance down on the first health check it misses
//     (replication_instance_connector.cpp 36–40: alive only while less than 0 s have passed).
//
// The CRD refuses both (a CEL rule each, whose Go twin is unsafeSettings). A MemgraphCluster
// stored before those rules existed reaches the hook with them all the same: AdmitWithholding
// withholds such a setting instead of refusing the cluster, so the hook never sends it and says
// why.

// The messages of the timings' CEL rules in settings.go, word for word (crd_test.go checks them).
const (
	MsgHealthCheckFrequency = "coordinatorSettings.instanceHealthCheckFrequencySeconds must be at least 1: Memgraph 3.12 accepts 0 and keeps it in the coordinators' Raft log; the leader then stops health-checking (no failover), and every coordinator that later leads the registered instances, or registers one, aborts, so the coordinators crash-loop until their Raft data is wiped; use 1 or more (Memgraph's default is 1)"
	MsgInstanceDownTimeout  = "coordinatorSettings.instanceDownTimeoutSeconds must be at least 1: Memgraph 3.12 accepts 0, which marks an instance down on the first health check it misses, so a single lost ping fails the MAIN over; use 1 or more (Memgraph's default is 5)"
)

// settingFloors are the declared settings with a floor above what Memgraph takes, each with the
// field it sits at and the CEL rule's message.
var settingFloors = []struct {
	field string
	msg   string
	value func(*CoordinatorSettings) **int64
}{
	{"spec.coordinatorSettings.instanceDownTimeoutSeconds", MsgInstanceDownTimeout,
		func(s *CoordinatorSettings) **int64 { return &s.InstanceDownTimeoutSeconds }},
	{"spec.coordinatorSettings.instanceHealthCheckFrequencySeconds", MsgHealthCheckFrequency,
		func(s *CoordinatorSettings) **int64 { return &s.InstanceHealthCheckFrequencySeconds }},
}

// minSettingSeconds is the floor of both timings, the "self >= 1" of their CEL rules.
const minSettingSeconds = 1

// unsafeSettings is the twin of the timings' CEL rules: a violation for each declared one below
// minSettingSeconds.
func unsafeSettings(s *CoordinatorSettings) violations {
	var vs violations
	for _, f := range settingFloors {
		v := *f.value(s)
		vs.add(v != nil && *v < minSettingSeconds, f.field, f.msg)
	}
	return vs
}

// withholdUnsafe removes from s every setting unsafeSettings refuses and returns their
// violations.
func withholdUnsafe(s *CoordinatorSettings) violations {
	vs := unsafeSettings(s)
	for _, f := range settingFloors {
		if v := f.value(s); *v != nil && **v < minSettingSeconds {
			*v = nil
		}
	}
	return vs
}
