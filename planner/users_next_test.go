package planner

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// Named fixtures of a MemgraphUser's pass: the user app of cluster mg (namespace db, generation
// 3, spec.auth's user hooks, the role reporting declared), whose password Secret app-pw is at
// version 1 as the status records, on a MAIN that shows convergedApp.

func userCluster(t *testing.T) *topology.Cluster {
	t.Helper()
	c, err := topology.Admit([]byte(`{"apiVersion":"memgraph.com/v1alpha1","kind":"MemgraphCluster","metadata":{"name":"mg",` +
		`"namespace":"db","uid":"u1","generation":3},"spec":{"auth":{"secretName":"mg-auth"},` +
		`"roles":[{"name":"reporting","privileges":["MATCH","STATS"]}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func appUser() *v1alpha1.MemgraphUser {
	return &v1alpha1.MemgraphUser{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "db", Generation: 2},
		Spec: v1alpha1.MemgraphUserSpec{Cluster: "mg", PasswordSecret: &v1alpha1.SecretReference{Name: "app-pw"},
			Roles: []string{"reporting", "readonly"}, Privileges: []v1alpha1.MemgraphPrivilege{"MATCH", "CREATE"}},
		Status: v1alpha1.MemgraphUserStatus{AppliedPasswordVersion: "app-pw/1", MainDatabase: memgraph.DefaultDatabase}}
}

func appPass(t *testing.T) *UserPass {
	return &UserPass{User: appUser(), Cluster: userCluster(t), Access: UserAccess{Exists: true, Generation: "3", HookUser: "hooks"},
		Password: UserPassword{Version: "app-pw/1"}}
}

// userMain plays the cluster a pass reaches (UserEffects) and the MAIN it reads and writes: what
// the MAIN shows before any statement (shows) and after (then; shows when nil), and the errors of
// reads and statements, by step.
type userMain struct {
	name    string
	mainErr error  // no coordinator answers: no MAIN found
	problem string // the cluster cannot be reached as its Secrets say
	shows   userInput
	then    *UserState
	readErr map[string]error // by the step's label
	refuse  map[string]error // by the statement's text
	// unhashable: the password cannot be hashed (longer than bcrypt reads)
	unhashable bool
	// step is the label of the step performed; wrote: a statement was taken before it.
	step  string
	wrote bool
}

func convergedMain() *userMain { return &userMain{name: "instance_1", shows: convergedApp()} }

// label names a step as the test expects it, literally; the coordinators' reads of the search
// for the MAIN (findmain_test.go) are part of "find the MAIN" and have none.
func label(s UserStep) string {
	switch s := s.(type) {
	case UserWrite:
		return s.Statement.Text()
	case userReach:
		return "find the MAIN"
	case userShowInstances:
		return ""
	case UserRead:
		out := map[UserReadKind]string{UserReadUsers: "SHOW USERS", UserReadRoles: "SHOW ROLES",
			UserReadRolesOf: "SHOW ROLES FOR", UserReadPrivileges: "SHOW PRIVILEGES FOR", UserReadDatabases: "SHOW DATABASE PRIVILEGES FOR"}[s.What]
		if s.Target.Name != "" {
			out += " " + s.Target.String()
		}
		if s.Database != "" {
			out += " ON " + s.Database
		}
		return out
	}
	return "done"
}

func (m *userMain) Reach() string { return m.problem }

// ShowInstances is every coordinator's table: coordinator_1 leads, m.name is the MAIN.
func (m *userMain) ShowInstances(context.Context, string, int) ([]memgraph.Instance, error) {
	if m.mainErr != nil {
		return nil, m.mainErr
	}
	ordinal, _ := topology.ParseDataInstanceName(m.name)
	return rows(coords(3, 1), one(replica(1-ordinal), mainRow(ordinal))), nil
}

func (m *userMain) Main(address string) (memgraph.UserClient, error) {
	if address == "" {
		return nil, errors.New("no MAIN's address")
	}
	return mainClient{m: m}, nil
}

// mainClient is the MAIN's client of a userMain.
type mainClient struct {
	memgraph.Client // the MAIN's other queries: none is sent
	m               *userMain
}

func (m *userMain) PasswordHash(bool) (memgraph.Password, error) {
	if m.unhashable {
		return memgraph.Password{}, errors.New("the user's password is longer than 72 bytes, all a bcrypt hash reads; choose a shorter one")
	}
	return memgraph.PasswordHash("bcrypt:$2a$04$hash"), nil
}

func (m *userMain) user() UserState {
	if m.wrote && m.then != nil {
		return *m.then
	}
	return m.shows.User
}

func (c mainClient) ShowUsers(context.Context) ([]string, error) {
	return c.m.shows.Users, c.m.readErr[c.m.step]
}

func (c mainClient) ShowRoles(context.Context) ([]memgraph.RoleInfo, error) {
	var roles []memgraph.RoleInfo
	for _, name := range []string{"admin", "readonly", "readwrite", "reporting"} {
		if r, ok := c.m.shows.Roles[name]; ok && r.Exists {
			roles = append(roles, memgraph.RoleInfo{Name: name, Builtin: r.Builtin})
		}
	}
	return roles, c.m.readErr[c.m.step]
}

func (c mainClient) ShowRolesForUser(context.Context, string) ([]string, error) {
	return c.m.user().Roles, c.m.readErr[c.m.step]
}

func (c mainClient) ShowPrivileges(_ context.Context, t memgraph.AuthTarget, _ string) ([]memgraph.PrivilegeRow, error) {
	if t.Role {
		return c.m.shows.Roles[t.Name].Privileges, c.m.readErr[c.m.step]
	}
	return c.m.user().Privileges, c.m.readErr[c.m.step]
}

func (c mainClient) ShowDatabasePrivileges(_ context.Context, t memgraph.AuthTarget) (memgraph.DatabaseAccess, error) {
	if t.Role {
		return c.m.shows.Roles[t.Name].Databases, c.m.readErr[c.m.step]
	}
	return c.m.user().Databases, c.m.readErr[c.m.step]
}

func (c mainClient) RunAuth(context.Context, memgraph.AuthStatement) error {
	return c.m.refuse[c.m.step]
}

// driveUser performs the pass's steps on m until NextUser is done; steps are their labels.
func driveUser(t *testing.T, in *UserPass, m *userMain) ([]string, UserDone) {
	t.Helper()
	var record []UserResult
	var steps []string
	for range 100 {
		s := NextUser(in, record)
		if done, ok := s.(UserDone); ok {
			return steps, done
		}
		if m.step = label(s); m.step != "" {
			steps = append(steps, m.step)
		}
		got := s.Perform(context.Background(), m)
		if _, ok := s.(UserWrite); ok && got.Err == nil && got.Problem == "" {
			m.wrote = true
		}
		record = append(record, got)
	}
	t.Fatalf("no end after 100 steps: %v", steps)
	return nil, UserDone{}
}

// convergedReads are the reads of a pass on a MAIN that shows app in force.
var convergedReads = []string{"find the MAIN", "SHOW USERS", "SHOW ROLES",
	"SHOW DATABASE PRIVILEGES FOR role readonly",
	"SHOW DATABASE PRIVILEGES FOR role reporting", "SHOW PRIVILEGES FOR role reporting ON memgraph",
	"SHOW ROLES FOR user app", "SHOW PRIVILEGES FOR user app ON memgraph", "SHOW DATABASE PRIVILEGES FOR user app"}

// appStatus is app's status when the MAIN shows it in force.
func appStatus(phase v1alpha1.UserPhase) v1alpha1.MemgraphUserStatus {
	return v1alpha1.MemgraphUserStatus{ObservedGeneration: 2, Phase: phase, Username: "app", Secret: "app-pw",
		AppliedPasswordVersion: "app-pw/1", MainDatabase: memgraph.DefaultDatabase,
		Roles: []string{"readonly", "reporting"}, Privileges: []string{"CREATE", "MATCH", "STATS"}, Databases: []string{memgraph.DefaultDatabase}}
}

// unread is app's status when the pass read nothing of the user.
func unread(phase v1alpha1.UserPhase) v1alpha1.MemgraphUserStatus {
	return v1alpha1.MemgraphUserStatus{ObservedGeneration: 2, Phase: phase, Username: "app", Secret: "app-pw",
		AppliedPasswordVersion: "app-pw/1", MainDatabase: memgraph.DefaultDatabase}
}

func TestNextUser(t *testing.T) {
	refused := func(text, msg string) error {
		return &memgraph.Error{Kind: memgraph.KindUnknown, Query: text, Message: msg}
	}
	for _, tc := range []struct {
		name   string
		edit   func(in *UserPass, m *userMain)
		steps  []string
		reason string
		status v1alpha1.MemgraphUserStatus
		sent   int
		plan   []string
	}{
		{name: "converged: reads alone", edit: func(*UserPass, *userMain) {},
			steps: convergedReads, reason: ReasonUserInForce, status: appStatus(v1alpha1.UserReady)},
		{name: "the user-access Secret follows an older generation: nothing is read",
			edit:   func(in *UserPass, _ *userMain) { in.Access.Generation = "2" },
			reason: ReasonAccessSecretPending, status: unread(v1alpha1.UserPending)},
		{name: "the user-access Secret does not exist: nothing is read",
			edit:   func(in *UserPass, _ *userMain) { in.Access = UserAccess{} },
			reason: ReasonAccessSecretPending, status: unread(v1alpha1.UserPending)},
		{name: "a stale copy names the user's own name as the hook's: still only a wait for the copy",
			edit:   func(in *UserPass, _ *userMain) { in.Access.Generation, in.Access.HookUser = "", "app" },
			reason: ReasonAccessSecretPending, status: unread(v1alpha1.UserPending)},
		{name: "spec.tls's CA unusable: the MAIN is not even looked for",
			edit:   func(in *UserPass, _ *userMain) { in.Access.TLSProblem = "Secret db/mg-tls has no ca.crt" },
			reason: ReasonHookCredentials, status: unread(v1alpha1.UserPending)},
		{name: "no password could be made",
			edit: func(in *UserPass, _ *userMain) {
				in.Password = UserPassword{Unavailable: "generate a password: no entropy"}
			},
			reason: ReasonCredentialsPending, status: unread(v1alpha1.UserPending)},
		{name: "no MAIN", edit: func(_ *UserPass, m *userMain) { m.mainErr = errors.New("cluster mg has no MAIN") },
			steps: []string{"find the MAIN"}, reason: ReasonUserNoMain, status: unread(v1alpha1.UserPending)},
		{name: "the cluster cannot be reached as its Secrets say", edit: func(_ *UserPass, m *userMain) {
			m.problem = "the CA of Secret db/mg-tls (spec.tls.secretName): no certificate"
		}, steps: []string{"find the MAIN"}, reason: ReasonHookCredentials, status: unread(v1alpha1.UserPending)},
		{name: "a read fails: the status shows nothing of the user", edit: func(_ *UserPass, m *userMain) {
			m.readErr = map[string]error{"SHOW ROLES": &memgraph.Error{Kind: memgraph.KindUnreachable, Message: "dial tcp: refused"}}
		}, steps: convergedReads[:3], reason: ReasonMemgraphUnreachable, status: unread(v1alpha1.UserPending)},
		{name: "a built-in role the MAIN does not have", edit: func(_ *UserPass, m *userMain) {
			delete(m.shows.Roles, "readonly")
		}, steps: []string{"find the MAIN", "SHOW USERS", "SHOW ROLES", "SHOW DATABASE PRIVILEGES FOR role reporting",
			"SHOW PRIVILEGES FOR role reporting ON memgraph", "SHOW ROLES FOR user app", "SHOW PRIVILEGES FOR user app ON memgraph",
			"SHOW DATABASE PRIVILEGES FOR user app"}, reason: ReasonUnknownRole, status: unread(v1alpha1.UserFailed)},
		{name: "a new password: set, and recorded as applied", edit: func(in *UserPass, _ *userMain) {
			in.Password.Version = "app-pw/2"
		}, steps: append(append(append([]string(nil), convergedReads...), "SET PASSWORD FOR `app` TO '<redacted>'"), convergedReads[6:]...),
			reason: ReasonUserInForce, sent: 1, status: func() v1alpha1.MemgraphUserStatus {
				st := appStatus(v1alpha1.UserReady)
				st.AppliedPasswordVersion = "app-pw/2"
				return st
			}()},
		{name: "a new user whose CREATE USER finds it created meanwhile: its password set instead", edit: func(in *UserPass, m *userMain) {
			in.Password.Version = "app-pw/2"
			m.shows.Users, m.shows.User = []string{"hooks"}, UserState{}
			converged := convergedApp().User
			m.then = &converged
			m.refuse = map[string]error{"CREATE USER `app` IDENTIFIED BY '<redacted>'": &memgraph.Error{Kind: memgraph.KindAlreadyExists, Message: "User 'app' already exists."}}
		}, steps: []string{"find the MAIN", "SHOW USERS", "SHOW ROLES", "SHOW DATABASE PRIVILEGES FOR role readonly",
			"SHOW DATABASE PRIVILEGES FOR role reporting", "SHOW PRIVILEGES FOR role reporting ON memgraph",
			"CREATE USER `app` IDENTIFIED BY '<redacted>'", "SET PASSWORD FOR `app` TO '<redacted>'",
			"SET ROLE FOR `app` TO `readonly`, `reporting`", "GRANT CREATE, MATCH TO USER `app`",
			"SHOW ROLES FOR user app", "SHOW PRIVILEGES FOR user app ON memgraph", "SHOW DATABASE PRIVILEGES FOR user app"},
			reason: ReasonUserInForce, sent: 3, status: func() v1alpha1.MemgraphUserStatus {
				st := appStatus(v1alpha1.UserReady)
				st.AppliedPasswordVersion = "app-pw/2"
				return st
			}()},
		{name: "refused after a REVOKE DATABASE: the main database is not carried forward", edit: func(_ *UserPass, m *userMain) {
			m.shows.User.Databases = memgraph.DatabaseAccess{All: true}
			m.refuse = map[string]error{"GRANT DATABASE `memgraph` TO USER `app`": refused("GRANT DATABASE `memgraph` TO USER `app`", "no")}
		}, steps: append(append(append([]string(nil), convergedReads...), "REVOKE DATABASE * FROM USER `app`", "GRANT DATABASE `memgraph` TO USER `app`"),
			convergedReads[6:]...), reason: ReasonMemgraphRefused, sent: 1, status: func() v1alpha1.MemgraphUserStatus {
			st := appStatus(v1alpha1.UserFailed)
			st.MainDatabase, st.Databases = "", []string{"*"}
			return st
		}()},
		{name: "a password that cannot be hashed: nothing sent, the user fails with why", edit: func(in *UserPass, m *userMain) {
			in.Password.Version, m.unhashable = "app-pw/2", true
		}, steps: append(append([]string(nil), convergedReads...), "SET PASSWORD FOR `app` TO '<redacted>'"),
			reason: ReasonMemgraphRefused, status: appStatus(v1alpha1.UserFailed)},
		{name: "a dry run plans and sends nothing", edit: func(in *UserPass, _ *userMain) {
			in.DryRun, in.Password.Version = true, "app-pw/2"
		}, steps: convergedReads, reason: "DryRun", status: appStatus(v1alpha1.UserPending),
			plan: []string{"SET PASSWORD FOR `app` TO '<redacted>'"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, m := appPass(t), convergedMain()
			tc.edit(in, m)
			steps, done := driveUser(t, in, m)
			if diff := cmp.Diff(tc.steps, steps, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("steps (-want +got):\n%s", diff)
			}
			want := UserDone{Verdict: UserVerdict{Phase: tc.status.Phase, Reason: tc.reason}, Status: tc.status, Sent: tc.sent, Plan: tc.plan}
			if diff := cmp.Diff(want, done, cmpopts.IgnoreFields(UserVerdict{}, "Message", "Resync"), cmpopts.IgnoreFields(UserDone{}, "Events")); diff != "" {
				t.Errorf("done (-want +got):\n%s", diff)
			}
			if done.Verdict.Message == "" {
				t.Error("no message")
			}
		})
	}
}

func TestNextUserFinalize(t *testing.T) {
	for _, tc := range []struct {
		name      string
		edit      func(in *UserPass, m *userMain)
		steps     []string
		phase     v1alpha1.UserPhase
		reason    string
		finalized bool
		sent      int
		plan      []string
		message   string
	}{
		{name: "deletionPolicy Delete: DROP USER", edit: func(*UserPass, *userMain) {},
			steps: []string{"find the MAIN", "SHOW USERS", "DROP USER `app`"}, phase: v1alpha1.UserReady, reason: ReasonUserDropped, finalized: true, sent: 1},
		{name: "already gone: nothing sent", edit: func(_ *UserPass, m *userMain) { m.shows.Users = []string{"hooks"} },
			steps: []string{"find the MAIN", "SHOW USERS"}, phase: v1alpha1.UserReady, reason: ReasonUserDropped, finalized: true},
		{name: "a declaration the sync refuses is dropped all the same", edit: func(in *UserPass, _ *userMain) {
			in.User.Spec.Roles = []string{"nope"}
			in.Password = UserPassword{Problem: "Secret db/app-pw (spec.passwordSecret) does not exist"}
		}, steps: []string{"find the MAIN", "SHOW USERS", "DROP USER `app`"}, phase: v1alpha1.UserReady, reason: ReasonUserDropped, finalized: true, sent: 1},
		{name: "deletionPolicy Retain: nothing read", edit: func(in *UserPass, _ *userMain) { in.User.Spec.DeletionPolicy = v1alpha1.UserRetain },
			phase: v1alpha1.UserReady, reason: ReasonUserRetained, finalized: true},
		{name: "the cluster is gone, and the user with it", edit: func(in *UserPass, _ *userMain) { in.Cluster = nil },
			phase: v1alpha1.UserReady, reason: ReasonUserDropped, finalized: true},
		{name: "the hook's own user is never dropped", edit: func(in *UserPass, _ *userMain) { in.Access.HookUser = "APP" },
			phase: v1alpha1.UserReady, reason: ReasonUserRetained, finalized: true},
		{name: "a stale user-access Secret: the drop waits", edit: func(in *UserPass, _ *userMain) { in.Access.Generation = "2" },
			phase: v1alpha1.UserPending, reason: ReasonAccessSecretPending, message: "set deletionPolicy: Retain"},
		{name: "no MAIN: the drop waits", edit: func(_ *UserPass, m *userMain) { m.mainErr = errors.New("cluster mg has no MAIN") },
			steps: []string{"find the MAIN"}, phase: v1alpha1.UserPending, reason: ReasonUserNoMain},
		{name: "a dry run: DROP USER not sent", edit: func(in *UserPass, _ *userMain) { in.DryRun = true },
			steps: []string{"find the MAIN", "SHOW USERS"}, phase: v1alpha1.UserPending, reason: "DryRun", plan: []string{"DROP USER `app`"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, m := appPass(t), convergedMain()
			in.Finalizing = true
			tc.edit(in, m)
			steps, done := driveUser(t, in, m)
			if diff := cmp.Diff(tc.steps, steps, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("steps (-want +got):\n%s", diff)
			}
			want := UserDone{Verdict: UserVerdict{Phase: tc.phase, Reason: tc.reason}, Status: unread(tc.phase), Finalized: tc.finalized, Sent: tc.sent, Plan: tc.plan}
			if diff := cmp.Diff(want, done, cmpopts.IgnoreFields(UserVerdict{}, "Message", "Resync"), cmpopts.IgnoreFields(UserDone{}, "Events")); diff != "" {
				t.Errorf("done (-want +got):\n%s", diff)
			}
			if !strings.Contains(done.Verdict.Message, tc.message) || done.Verdict.Message == "" {
				t.Errorf("message %q, want it to say %q", done.Verdict.Message, tc.message)
			}
		})
	}
}
