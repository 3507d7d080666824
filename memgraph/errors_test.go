package memgraph

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

const clientErrorCode = "Memgraph.ClientError.MemgraphError.MemgraphError"

// memgraphTexts are Memgraph 3.12's messages (Memgraph v3.12.0 src/query/interpreter.cpp, with
// {…} substituted), each with the Kind the planner must see.
var memgraphTexts = []struct {
	message string
	want    Kind
}{
	// §3.1 generic / routing
	{"Access to high availability requires an enterprise, ai_platform, or oem license.", KindLicense},
	{"Coordinator was not initialized as coordinator port, coordinator id or management port were not set.", KindNotCoordinator},
	{"Coordinator can run only coordinator queries!", KindNotCoordinator},
	{"Managing coordinators is not allowed in multicommand transactions. A multicommand transaction, also known as an explicit transaction, groups multiple commands into a single atomic operation. Instead, please use an implicit transaction, also known as an auto committing transaction, in order to execute this particularquery. For more details, visit https://memgraph.com/docs", KindExplicitTransaction},
	{"Request forwarded to the leader but leader failed with request processing! Check logs on the leader to find out what happened!", KindForwardFailed},
	{"Tried to forward the request to the current leader but the leader couldn't be found!", KindNoLeader},
	{"Writing to Raft log failed. Please retry the operation.", KindRaftWrite},
	{"Invalid bolt socket address. The socket address must be a string defining the address and port, delimited by a single colon. The address must be valid and the port must be an integer.", KindBadConfig},
	{"Invalid management socket address. The socket address must be a string defining the address and port, delimited by a single colon. The address must be valid and the port must be an integer.", KindBadConfig},
	{"Invalid replication socket address. The socket address must be a string defining the address and port, delimited by a single colon. The address must be valid and the port must be an integer.", KindBadConfig},
	{"Invalid coordinator socket address. The socket address must be a string defining the address and port, delimited by a single colon. The address must be valid and the port must be an integer.", KindBadConfig},
	// §1.1, §1.2 config maps
	{"Config map must contain exactly 3 entries: coordinator_server, bolt_server and  management_server!", KindBadConfig},
	{"Config map must contain coordinator_server entry!", KindBadConfig},
	{"Config map must contain exactly 3 entries: bolt_server, management_server and replication_server!", KindBadConfig},
	{"Config map must contain replication_server entry!", KindBadConfig},
	{"Failed to parse config map!", KindBadConfig},
	// §3.2 data instances
	{"Only coordinator can run SHOW INSTANCES.", KindNotCoordinator},
	{"Only coordinator can run SHOW INSTANCE query.", KindNotCoordinator},
	{"Only coordinator can register coordinator server!", KindNotCoordinator},
	{"Only coordinator can unregister instance!", KindNotCoordinator},
	{"Only coordinator can demote instance!", KindNotCoordinator},
	{"Only coordinator can add coordinator instance!", KindNotCoordinator},
	{"Only coordinator can remove coordinator instance!", KindNotCoordinator},
	{"Only coordinator can force reset cluster!", KindNotCoordinator},
	{"Only coordinator can update config!", KindNotCoordinator},
	{"Only coordinator can run YIELD LEADERSHIP query.", KindNotCoordinator},
	{"Only coordinator can run SET COORDINATOR SETTING query.", KindNotCoordinator},
	{"Only coordinator can run SHOW COORDINATOR SETTINGS query.", KindNotCoordinator},
	{"Only coordinator can run SHOW REPLICATION LAG query.", KindNotCoordinator},
	// §3.3 REGISTER INSTANCE
	{"Couldn't register replica instance since instance with such name already exists!", KindNameExists},
	{"Couldn't register replica instance since instance with such management server already exists!", KindAlreadyExists},
	{"Couldn't register replica instance since instance with such replication endpoint already exists!", KindAlreadyExists},
	{"Cluster cannot consists of both STRICT_SYNC and SYNC replicas. The valid cluster consists of either STRICT_SYNC and ASYNC or SYNC and ASYNC replicas.", KindBadConfig},
	{"Couldn't register replica instance since coordinator is not a leader! Current leader is coordinator with id 3 with bolt socket address localhost:7692", KindNotLeader},
	{"Couldn't register replica instance since coordinator is not a leader! Try contacting other coordinators as there might be leader election happening or other coordinators are down.", KindNotLeader},
	// §3.4 SET INSTANCE TO MAIN
	{"Couldn't set instance to main since there is already a main instance in cluster!", KindMainExists},
	{"No instance with such name!", KindNoSuchInstance},
	{"Couldn't set instance to main since coordinator is not a leader! Current leader is coordinator with id 2 with bolt socket address localhost:7691", KindNotLeader},
	// §3.5 DEMOTE INSTANCE
	{"Instance instance_1 is already a replica!", KindAlreadyReplica},
	{"Couldn't demote instance to replica since coordinator is not a leader! Try contacting other coordinators as there might be leader election happening or other coordinators are down.", KindNotLeader},
	// §3.6 UNREGISTER INSTANCE
	{"Alive main instance can't be unregistered! Shut it down to trigger failover and then unregister it!", KindAliveMainUnregister},
	{"Couldn't unregister replica instance since coordinator is not a leader! Current leader is coordinator with id 1 with bolt socket address localhost:7690", KindNotLeader},
	// §3.7 ADD COORDINATOR
	{"Couldn't add coordinator since instance with such id already exists!", KindIDExists},
	{"Couldn't add coordinator since instance with such management endpoint already exists!", KindAlreadyExists},
	{"Couldn't add coordinator since instance with such coordinator server already exists!", KindAlreadyExists},
	{"Request for adding coordinator 2 failed because the coordinator was started with different network configuration. Check logs for more details.", KindBadConfig},
	{"Request for adding coordinator 2 reached a timeout!", KindMembershipTimeout},
	{"Request for adding coordinator 2 was cancelled!", KindRaftMembership},
	{"Request for adding coordinator 2 reached a raft timeout!", KindRaftMembership},
	{"Request for adding coordinator 2 failed because the coordinator isn't a leader anymore!", KindNotLeader},
	{"Bad request error occurred when adding coordinator 2!", KindRaftMembership},
	{"Request for adding coordinator 2 failed because raft server already exists!", KindAlreadyExists},
	{"Request for adding coordinator 2 failed because raft config is changing!", KindRaftMembership},
	{"Request for adding coordinator 2 failed because raft server is joining!", KindRaftMembership},
	{"Request for adding coordinator 2 failed because raft server isn't found!", KindNoSuchInstance},
	{"Request for adding coordinator 2 failed because raft server is leaving!", KindRaftMembership},
	{"Request for adding coordinator 2 failed because of a term mismatch!", KindRaftMembership},
	{"Request for adding coordinator 2 failed because raft result doesn't exist yet!", KindRaftMembership},
	{"Generic Raft failure occurred when adding coordinator 2!", KindRaftMembership},
	// §3.8 REMOVE COORDINATOR
	{"Request for removing coordinator 1 failed because the current leader cannot be removed!", KindLeaderRemoval},
	{"Couldn't remove coordinator instance because coordinator with id 7 doesn't exist!", KindNoSuchInstance},
	{"Request for removing coordinator 3 reached a timeout!", KindMembershipTimeout},
	{"Request for removing coordinator 3 failed because raft config is changing!", KindRaftMembership},
	{"Request for removing coordinator 3 failed because the coordinator isn't a leader anymore!", KindNotLeader},
	// §3.9 others
	{"Couldn't update config for the coordinator 4 because it doesn't exist!", KindNoSuchInstance},
	{"Couldn't update config for the repl instance instance_9 because it doesn't exist!", KindNoSuchInstance},
	{"Couldn't update config because appending to Raft log failed.", KindRaftWrite},
	{"Only the current leader can yield the leadership!", KindNotLeader},
	{"Yielding leadership failed since the instance is not leader anymore!", KindNotLeader},
	{"Force reset failed since the instance is not leader anymore!", KindNotLeader},
	{"Force reset failed, check logs for more details!", KindUnknown},
	{"Setting foo doesn't exist on coordinators.", KindUnknown},
	// SHOW REPLICAS on a data instance (src/query/interpreter.cpp ReplQueryHandler::ShowReplicas)
	{"Show replicas query should only be run on the main instance.", KindNotMain},
	{"Write queries are forbidden on the replica instance. Replica instances accept only read queries, while the main instance accepts read and write queries. Please retry your query on the main instance.", KindUnknown},
}

func TestClassifyMemgraphTexts(t *testing.T) {
	for _, tc := range memgraphTexts {
		if got := Classify(clientErrorCode, tc.message); got != tc.want {
			t.Errorf("Classify(%q) = %v, want %v", tc.message, got, tc.want)
		}
	}
}

func TestClassifyAuthenticationFailure(t *testing.T) {
	if got := Classify("Memgraph.ClientError.Security.Unauthenticated", "Authentication failure"); got != KindUnauthenticated {
		t.Errorf("got %v, want %v", got, KindUnauthenticated)
	}
}

// lastKind is the last Kind declared; a Kind added after it must move it.
const lastKind = KindSnapshotRunning

func TestEveryKindHasAName(t *testing.T) {
	seen := map[string]Kind{}
	for k := KindUnknown; k <= lastKind; k++ {
		name := k.String()
		if name == "" || strings.HasPrefix(name, "Kind(") {
			t.Errorf("Kind %d has no name", int(k))
		}
		if prev, dup := seen[name]; dup {
			t.Errorf("Kinds %d and %d share the name %q", prev, k, name)
		}
		seen[name] = k
	}
	if got := (lastKind + 1).String(); !strings.HasPrefix(got, "Kind(") {
		t.Errorf("lastKind+1 has the name %q: move lastKind to the last Kind", got)
	}
	if got := Kind(999).String(); got != "Kind(999)" {
		t.Errorf("out-of-range kind = %q", got)
	}
}

func TestErrorKeepsMessageAndUnwraps(t *testing.T) {
	cause := context.DeadlineExceeded
	e := &Error{Kind: KindAlreadyExists, Address: "coord-1:7687", Query: "REGISTER INSTANCE i1 WITH CONFIG {}",
		Code: clientErrorCode, Message: "Couldn't register replica instance since instance with such name already exists!", Err: cause}
	wrapped := fmt.Errorf("sync: %w", e)

	if KindOf(wrapped) != KindAlreadyExists {
		t.Errorf("KindOf = %v", KindOf(wrapped))
	}
	if !errors.Is(wrapped, context.DeadlineExceeded) {
		t.Error("errors.Is does not reach the cause")
	}
	want := "memgraph coord-1:7687: REGISTER INSTANCE i1 WITH CONFIG {}: already exists: Couldn't register replica instance since instance with such name already exists!"
	if e.Error() != want {
		t.Errorf("Error() = %q\nwant      %q", e.Error(), want)
	}
	if KindOf(errors.New("plain")) != KindUnknown || KindOf(nil) != KindUnknown {
		t.Error("KindOf of a foreign error must be KindUnknown")
	}
}
