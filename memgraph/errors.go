package memgraph

import (
	"errors"
	"fmt"
	"strings"
)

// Kind classifies a failed query so the planner can decide what to do without parsing
// Memgraph's texts itself. Memgraph's own message always stays in Error.Message.
type Kind int

const (
	// KindUnknown: not classified (an unrecognised Memgraph message, a driver usage error).
	KindUnknown Kind = iota
	// KindInvalidArgument: our own validation refused the input; nothing was sent.
	KindInvalidArgument
	// KindUnreachable: dialing or the Bolt handshake failed, the connection dropped, or the
	// context ended before a connection was ready.
	KindUnreachable
	// KindTimeout: the context ended after the query was sent; its outcome is unknown.
	KindTimeout
	// KindClosed: the Pool was closed.
	KindClosed
	// KindAlreadyExists: an endpoint (management, replication or coordinator server) is
	// registered already, or NuRaft already has the Raft server. A name or an id that exists has
	// a kind of its own (KindNameExists, KindIDExists).
	KindAlreadyExists
	// KindMainExists: SET INSTANCE TO MAIN while Raft already records a MAIN (alive or not).
	KindMainExists
	// KindAliveMainUnregister: UNREGISTER INSTANCE of the alive MAIN.
	KindAliveMainUnregister
	// KindLeaderRemoval: REMOVE COORDINATOR of the current leader (run on the leader).
	KindLeaderRemoval
	// KindNotLeader: the coordinator is not (or no longer) the leader: YIELD LEADERSHIP on a
	// follower, or a NOT_LEADER race during a write.
	KindNotLeader
	// KindForwardFailed: a follower forwarded the write and the leader refused it; the leader's
	// specific reason is lost (it may be any other kind, including "already exists").
	KindForwardFailed
	// KindNoLeader: a follower had no leader to forward to.
	KindNoLeader
	// KindRaftWrite: committing to the Raft log failed (typically no quorum). Retry later.
	KindRaftWrite
	// KindRaftMembership: a Raft membership change (ADD/REMOVE COORDINATOR) was cancelled, hit
	// a Raft timeout or collided with another one. Retry later.
	KindRaftMembership
	// KindAlreadyReplica: DEMOTE INSTANCE of an instance that is already a replica.
	KindAlreadyReplica
	// KindNoSuchInstance: no instance with that name, or no coordinator with that id.
	KindNoSuchInstance
	// KindNotCoordinator: the address answered but is not a coordinator (a data instance, or a
	// coordinator query on a plain instance / a non-coordinator query on a coordinator).
	KindNotCoordinator
	// KindExplicitTransaction: a coordinator query inside an explicit transaction.
	KindExplicitTransaction
	// KindBadConfig: Memgraph refused a config map or an address in it, or the coordinator was
	// started with a network configuration other than the one given for it.
	KindBadConfig
	// KindLicense: the instance has no enterprise license, so high availability is unavailable.
	KindLicense
	// KindUnauthenticated: the server refused the credentials.
	KindUnauthenticated
	// KindProtocol: the server answered with a result we cannot read (missing column, wrong type).
	KindProtocol
	// KindMembershipTimeout: NuRaft accepted ADD/REMOVE COORDINATOR but Memgraph's ~2 s poll
	// did not see it complete ("reached a timeout!"). It may still complete: a coordinator
	// added this way can join later as a half-joined member, listed with an empty bolt_server.
	KindMembershipTimeout
	// KindNameExists: REGISTER INSTANCE of a name that is registered already.
	KindNameExists
	// KindIDExists: ADD COORDINATOR of an id that is a Raft member already. It answers both for a
	// registered member and for a half-joined one (NuRaft knows it, the application log does not;
	// SHOW INSTANCES lists it with an empty bolt_server), so it does not prove the coordinator is
	// registered.
	KindIDExists
	// KindNotMain: SHOW REPLICAS on a data instance that is a REPLICA (only a MAIN lists its
	// replicas), for example one demoted since its address was chosen.
	KindNotMain
	// KindSnapshotRunning: CREATE SNAPSHOT while a snapshot of the same database is being
	// written (the periodic one or another CREATE SNAPSHOT). Waiting and sending it again works.
	KindSnapshotRunning
)

var kindNames = [...]string{
	KindUnknown:             "unknown",
	KindInvalidArgument:     "invalid argument",
	KindUnreachable:         "unreachable",
	KindTimeout:             "timeout",
	KindClosed:              "closed",
	KindAlreadyExists:       "already exists",
	KindMainExists:          "main exists",
	KindAliveMainUnregister: "alive main unregister",
	KindLeaderRemoval:       "leader removal",
	KindNotLeader:           "not leader",
	KindForwardFailed:       "forward failed",
	KindNoLeader:            "no leader",
	KindRaftWrite:           "raft write failed",
	KindRaftMembership:      "raft membership change failed",
	KindAlreadyReplica:      "already replica",
	KindNoSuchInstance:      "no such instance",
	KindNotCoordinator:      "not coordinator",
	KindExplicitTransaction: "explicit transaction",
	KindBadConfig:           "bad config",
	KindLicense:             "license",
	KindUnauthenticated:     "unauthenticated",
	KindProtocol:            "protocol",
	KindMembershipTimeout:   "membership change timed out",
	KindNameExists:          "name exists",
	KindIDExists:            "id exists",
	KindNotMain:             "not main",
	KindSnapshotRunning:     "snapshot running",
}

func (k Kind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Error is every error the memgraph client returns.
type Error struct {
	Kind    Kind
	Address string // the address as given to Connector.Client ("" before any)
	Query   string // the query text as sent ("" when validation failed before rendering)
	Code    string // Memgraph's Bolt failure code, "" when the failure was not a server reply
	Message string // Memgraph's message verbatim, or our own description
	Err     error  // the underlying driver or context error, if any
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("memgraph")
	if e.Address != "" {
		b.WriteString(" ")
		b.WriteString(e.Address)
	}
	if e.Query != "" {
		b.WriteString(": ")
		b.WriteString(e.Query)
	}
	b.WriteString(": ")
	b.WriteString(e.Kind.String())
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	} else if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// KindOf returns the Kind of the first *Error in err's chain, KindUnknown if there is none.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindUnknown
}

func invalidArgument(format string, args ...any) *Error {
	return &Error{Kind: KindInvalidArgument, Message: fmt.Sprintf(format, args...)}
}

// messageRule maps a stable substring of a Memgraph 3.12 message to a Kind. Rules are tried in
// order; earlier rules are the more specific ones (for example the forwarded-failure text must
// win over anything that merely mentions a leader).
type messageRule struct {
	substring string
	kind      Kind
}

var messageRules = []messageRule{
	{"Managing coordinators is not allowed in multicommand transactions", KindExplicitTransaction},
	{"Request forwarded to the leader but leader failed", KindForwardFailed},
	{"leader couldn't be found", KindNoLeader},
	{"Writing to Raft log failed", KindRaftWrite},
	{"appending to Raft log failed", KindRaftWrite},
	{"Access to high availability requires", KindLicense},
	{"Access to multi-tenancy requires", KindLicense},
	{"Another snapshot creation is already in progress", KindSnapshotRunning},
	{"Coordinator can run only coordinator queries", KindNotCoordinator},
	{"Coordinator was not initialized as coordinator", KindNotCoordinator},
	{"Only coordinator can ", KindNotCoordinator},
	{"Only the current leader can yield", KindNotLeader},
	{"since coordinator is not a leader", KindNotLeader},
	{"isn't a leader anymore", KindNotLeader},
	{"is not leader anymore", KindNotLeader},
	{"already a main instance", KindMainExists},
	{"Alive main instance can't be unregistered", KindAliveMainUnregister},
	{"current leader cannot be removed", KindLeaderRemoval},
	{"instance with such name already exists", KindNameExists},
	{"instance with such id already exists", KindIDExists},
	{"already exists", KindAlreadyExists},
	{"is already a replica", KindAlreadyReplica},
	{"No instance with such name", KindNoSuchInstance},
	{"because coordinator with id", KindNoSuchInstance},
	{"because it doesn't exist", KindNoSuchInstance},
	{"raft server isn't found", KindNoSuchInstance},
	{"started with different network configuration", KindBadConfig},
	{"socket address", KindBadConfig},
	{"Config map must contain", KindBadConfig},
	{"Failed to parse config map", KindBadConfig},
	{"Cluster cannot consists of both STRICT_SYNC and SYNC", KindBadConfig},
	{"reached a timeout", KindMembershipTimeout},
	{"reached a raft timeout", KindRaftMembership},
	{"was cancelled", KindRaftMembership},
	{"raft config is changing", KindRaftMembership},
	{"raft server is joining", KindRaftMembership},
	{"raft server is leaving", KindRaftMembership},
	{"term mismatch", KindRaftMembership},
	{"raft result doesn't exist yet", KindRaftMembership},
	{"Generic Raft failure", KindRaftMembership},
	{"Bad request error occurred", KindRaftMembership},
	{"Show replicas query should only be run on the main instance", KindNotMain},
}

// Classify maps a Bolt FAILURE (code and message) to a Kind.
func Classify(code, message string) Kind {
	if strings.HasSuffix(code, ".Security.Unauthenticated") {
		return KindUnauthenticated
	}
	for _, r := range messageRules {
		if strings.Contains(message, r.substring) {
			return r.kind
		}
	}
	return KindUnknown
}
