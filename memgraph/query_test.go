package memgraph

import (
	"testing"
)

func TestRenderQueries(t *testing.T) {
	coord := CoordinatorConfig{
		BoltServer:        "memgraph-coordinator-1.db.svc.cluster.local:7687",
		CoordinatorServer: "memgraph-coordinator-1.db.svc.cluster.local:12000",
		ManagementServer:  "memgraph-coordinator-1.db.svc.cluster.local:10000",
	}
	inst := InstanceConfig{
		BoltServer:        "memgraph-data-0.db.svc.cluster.local:7687",
		ManagementServer:  "memgraph-data-0.db.svc.cluster.local:10000",
		ReplicationServer: "memgraph-data-0.db.svc.cluster.local:20000",
	}
	tests := []struct{ name, got, want string }{
		{"add coordinator", AddCoordinatorQuery(1, coord),
			"ADD COORDINATOR 1 WITH CONFIG {'bolt_server': 'memgraph-coordinator-1.db.svc.cluster.local:7687', " +
				"'coordinator_server': 'memgraph-coordinator-1.db.svc.cluster.local:12000', " +
				"'management_server': 'memgraph-coordinator-1.db.svc.cluster.local:10000'}"},
		{"register instance", RegisterInstanceQuery("instance_1", inst),
			"REGISTER INSTANCE instance_1 WITH CONFIG {'bolt_server': 'memgraph-data-0.db.svc.cluster.local:7687', " +
				"'management_server': 'memgraph-data-0.db.svc.cluster.local:10000', " +
				"'replication_server': 'memgraph-data-0.db.svc.cluster.local:20000'}"},
		{"register hyphenated", RegisterInstanceQuery("memgraph-data-0", InstanceConfig{"a:1", "b:2", "c:3", ModeSync}),
			"REGISTER INSTANCE `memgraph-data-0` WITH CONFIG {'bolt_server': 'a:1', 'management_server': 'b:2', 'replication_server': 'c:3'}"},
		{"register async", RegisterInstanceQuery("instance_1", InstanceConfig{"a:1", "b:2", "c:3", ModeAsync}),
			"REGISTER INSTANCE instance_1 AS ASYNC WITH CONFIG {'bolt_server': 'a:1', 'management_server': 'b:2', 'replication_server': 'c:3'}"},
		{"register strict sync", RegisterInstanceQuery("instance_1", InstanceConfig{"a:1", "b:2", "c:3", ModeStrictSync}),
			"REGISTER INSTANCE instance_1 AS STRICT_SYNC WITH CONFIG {'bolt_server': 'a:1', 'management_server': 'b:2', 'replication_server': 'c:3'}"},
		{"set coordinator setting", SetCoordinatorSettingQuery("instance_down_timeout_sec", "10"),
			"SET COORDINATOR SETTING 'instance_down_timeout_sec' TO '10'"},
		{"set coordinator setting escapes", SetCoordinatorSettingQuery("a'b", "x\\"), `SET COORDINATOR SETTING 'a\'b' TO 'x\\'`},
		{"set main", SetInstanceToMainQuery("instance_2"), "SET INSTANCE instance_2 TO MAIN"},
		{"set main keyword name", SetInstanceToMainQuery("main"), "SET INSTANCE `main` TO MAIN"},
		{"demote", DemoteInstanceQuery("instance_3"), "DEMOTE INSTANCE instance_3"},
		{"demote leading digit", DemoteInstanceQuery("0data"), "DEMOTE INSTANCE `0data`"},
		{"unregister", UnregisterInstanceQuery("instance_4"), "UNREGISTER INSTANCE instance_4"},
		{"unregister keyword any case", UnregisterInstanceQuery("Instance"), "UNREGISTER INSTANCE `Instance`"},
		{"remove coordinator", RemoveCoordinatorQuery(3), "REMOVE COORDINATOR 3"},
		{"update instance config", UpdateInstanceConfigQuery("instance_0", "203.0.113.7:7687"),
			"UPDATE CONFIG FOR INSTANCE instance_0 {'bolt_server': '203.0.113.7:7687'}"},
		{"update coordinator config", UpdateCoordinatorConfigQuery(2, "graph-coordinator-2.example.com:7687"),
			"UPDATE CONFIG FOR COORDINATOR 2 {'bolt_server': 'graph-coordinator-2.example.com:7687'}"},
		// Rendering never splices: even input validation would refuse stays inert.
		{"backquote in name", UnregisterInstanceQuery("a` DETACH DELETE n //"), "UNREGISTER INSTANCE `a`` DETACH DELETE n //`"},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, tc.got, tc.want)
		}
	}
}

func TestQuoteStringEscapes(t *testing.T) {
	tests := map[string]string{
		"plain:1":      `'plain:1'`,
		`it's`:         `'it\'s'`,
		`say "hi"`:     `'say \"hi\"'`,
		`back\slash`:   `'back\\slash'`,
		"line\nbreak":  `'line\nbreak'`,
		"tab\tcr\r":    `'tab\tcr\r'`,
		"bell\a\x7f":   `'bell\u0007\u007f'`,
		"form\fback\b": `'form\fback\b'`,
		"ünïcode":      `'ünïcode'`,
		"':'}) RETURN": `'\':\'}) RETURN'`,
	}
	for in, want := range tests {
		if got := quoteString(in); got != want {
			t.Errorf("quoteString(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestValidation(t *testing.T) {
	good := InstanceConfig{"data-0.ns.svc:7687", "data-0.ns.svc:10000", "data-0.ns.svc:20000", ModeSync}
	goodCoord := CoordinatorConfig{"c1:7687", "c1:12000", "c1:10000"}
	tests := []struct {
		name  string
		err   error
		valid bool
	}{
		{"instance ok", ValidateInstance("instance_1", good), true},
		{"k8s-style name ok", ValidateInstance("memgraph-data-0", good), true},
		{"empty name", ValidateInstance("", good), false},
		{"space in name", ValidateInstance("a b", good), false},
		{"backquote in name", ValidateInstanceName("a`b"), false},
		{"newline in name", ValidateInstanceName("a\nb"), false},
		{"long name", ValidateInstanceName(string(make([]byte, 254))), false},
		{"missing port", ValidateInstance("i", InstanceConfig{"host", "h:1", "h:2", ModeSync}), false},
		{"ipv6", ValidateInstance("i", InstanceConfig{"[::1]:7687", "h:1", "h:2", ModeSync}), false},
		{"two colons", ValidateInstance("i", InstanceConfig{"h:1:2", "h:1", "h:2", ModeSync}), false},
		{"port zero", ValidateInstance("i", InstanceConfig{"h:0", "h:1", "h:2", ModeSync}), false},
		{"port too big", ValidateInstance("i", InstanceConfig{"h:65536", "h:1", "h:2", ModeSync}), false},
		{"port with sign", ValidateInstance("i", InstanceConfig{"h:+1", "h:1", "h:2", ModeSync}), false},
		{"port leading zero", ValidateInstance("i", InstanceConfig{"h:07687", "h:1", "h:2", ModeSync}), false},
		{"quote in host", ValidateInstance("i", InstanceConfig{"h':1", "h:1", "h:2", ModeSync}), false},
		{"empty replication", ValidateInstance("i", InstanceConfig{"h:1", "h:1", "", ModeSync}), false},
		{"coordinator ok", ValidateCoordinator(1, goodCoord), true},
		{"coordinator id zero", ValidateCoordinator(0, goodCoord), false},
		{"coordinator id negative", ValidateCoordinatorID(-2), false},
		{"coordinator id too big", ValidateCoordinatorID(1 << 31), false},
		{"coordinator bad address", ValidateCoordinator(2, CoordinatorConfig{"c:1", "c:2", "c"}), false},
		{"update instance ok", ValidateUpdateInstanceConfig("instance_1", "lb.example.com:7687"), true},
		{"update instance ipv6", ValidateUpdateInstanceConfig("instance_1", "2001:db8::1:7687"), false},
		{"update instance bad name", ValidateUpdateInstanceConfig("a b", "h:1"), false},
		{"update coordinator ok", ValidateUpdateCoordinatorConfig(1, "198.51.100.4:31001"), true},
		{"update coordinator id zero", ValidateUpdateCoordinatorConfig(0, "h:1"), false},
		{"update coordinator no port", ValidateUpdateCoordinatorConfig(1, "h"), false},
	}
	for _, tc := range tests {
		if tc.valid {
			if tc.err != nil {
				t.Errorf("%s: unexpected error %v", tc.name, tc.err)
			}
			continue
		}
		if KindOf(tc.err) != KindInvalidArgument {
			t.Errorf("%s: got %v (kind %v), want a KindInvalidArgument error", tc.name, tc.err, KindOf(tc.err))
		}
	}
}
