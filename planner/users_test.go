package planner

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
)

// Named fixtures: the user app of cluster memgraph, with the declared role reporting and the
// built-in readonly; the hook's user hooks.
func appSpec() UserSpec {
	return UserSpec{Username: "app", Roles: []string{"readonly", "reporting"}, Privileges: PrivilegeSet{Names: []string{"CREATE", "MATCH"}},
		Databases: []string{memgraph.DefaultDatabase}, MainDatabase: memgraph.DefaultDatabase}
}

func reporting() RoleSpec {
	return RoleSpec{Name: "reporting", Privileges: PrivilegeSet{Names: []string{"MATCH", "STATS"}}, Databases: []string{memgraph.DefaultDatabase}}
}

func privilegeRows(level string, who string, names ...string) []memgraph.PrivilegeRow {
	var out []memgraph.PrivilegeRow
	for _, n := range names {
		desc := map[string]string{"GRANT": "GRANTED TO ", "DENY": "DENIED TO "}[level] + who
		out = append(out, memgraph.PrivilegeRow{Privilege: n, Effective: level, Description: desc})
	}
	return out
}

var defaultDBAccess = memgraph.DatabaseAccess{Granted: []string{memgraph.DefaultDatabase}, Denied: []string{}}

// convergedApp is what the MAIN shows once app is in force.
func convergedApp() userInput {
	readonly := RoleState{Exists: true, Builtin: true, Databases: defaultDBAccess}
	return userInput{Spec: appSpec(), Declared: map[string]RoleSpec{"reporting": reporting()}, HookUser: "hooks",
		Users: []string{"app", "hooks"},
		Roles: map[string]RoleState{"readonly": readonly, "reporting": {Exists: true, Privileges: privilegeRows("GRANT", "ROLE", "MATCH", "STATS"), Databases: defaultDBAccess}},
		User: UserState{Exists: true, Roles: []string{"reporting", "readonly"},
			Privileges: append(privilegeRows("GRANT", "USER", "CREATE"), memgraph.PrivilegeRow{Privilege: "MATCH", Effective: "GRANT", Description: "GRANTED TO USER, GRANTED TO ROLE"},
				memgraph.PrivilegeRow{Privilege: "STATS", Effective: "GRANT", Description: "GRANTED TO ROLE"},
				memgraph.PrivilegeRow{Privilege: "READ ON ALL LABELS", Effective: "GRANT", Description: "GLOBAL LABEL PERMISSION GRANTED TO ROLE"}),
			Databases: defaultDBAccess},
		MainDatabase: memgraph.DefaultDatabase}
}

func texts(cmds []AuthCommand) []string {
	var out []string
	for _, c := range cmds {
		out = append(out, c.Text())
	}
	return out
}

func TestPlanUser(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(in *userInput)
		want []string
	}{
		{"converged: nothing", func(*userInput) {}, nil},
		{"a new user and role on a MAIN with users", func(in *userInput) {
			in.Users = []string{"hooks"}
			in.Roles = map[string]RoleState{"readonly": in.Roles["readonly"]}
			in.User = UserState{}
		}, []string{
			"CREATE ROLE IF NOT EXISTS `reporting`", "GRANT MATCH, STATS TO ROLE `reporting`",
			"CREATE USER `app` IDENTIFIED BY '<redacted>'", "SET ROLE FOR `app` TO `readonly`, `reporting`", "GRANT CREATE, MATCH TO USER `app`",
		}},
		{"a MAIN without any user: the hook's own user first", func(in *userInput) {
			in.Users, in.Roles, in.User = nil, map[string]RoleState{}, UserState{}
			in.Spec.Roles, in.Spec.Privileges = nil, PrivilegeSet{All: true}
		}, []string{"CREATE USER `hooks` IDENTIFIED BY '<redacted>'", "CREATE USER `app` IDENTIFIED BY '<redacted>'", "GRANT ALL PRIVILEGES TO USER `app`"}},
		{"the password Secret changed", func(in *userInput) { in.PasswordChanged = true }, []string{"SET PASSWORD FOR `app` TO '<redacted>'"}},
		{"a privilege granted and one denied by hand", func(in *userInput) {
			in.User.Privileges = append(privilegeRows("GRANT", "USER", "CREATE", "DUMP"), privilegeRows("DENY", "USER", "MATCH")...)
		}, []string{"REVOKE DUMP FROM USER `app`", "GRANT MATCH TO USER `app`"}},
		{"a role's privilege revoked by hand", func(in *userInput) {
			r := in.Roles["reporting"]
			r.Privileges = privilegeRows("GRANT", "ROLE", "MATCH")
			in.Roles["reporting"] = r
		}, []string{"GRANT STATS TO ROLE `reporting`"}},
		{"a role removed from the user by hand", func(in *userInput) { in.User.Roles = []string{"readonly"} },
			[]string{"SET ROLE FOR `app` TO `readonly`, `reporting`"}},
		{"every role removed from the declaration", func(in *userInput) { in.Spec.Roles = nil },
			[]string{"CLEAR ROLE FOR `app`"}},
		{"ALL on a user missing one", func(in *userInput) { in.Spec.Privileges = PrivilegeSet{All: true} },
			[]string{"GRANT ALL PRIVILEGES TO USER `app`"}},
		{"from ALL back to a list: REVOKE cannot name SERVER_SIDE_DESCRIPTIONS", func(in *userInput) {
			in.User.Privileges = privilegeRows("GRANT", "USER", memgraph.Privileges...)
		}, []string{"REVOKE ALL PRIVILEGES FROM USER `app`", "GRANT CREATE, MATCH TO USER `app`"}},
		{"a new user of its own databases", func(in *userInput) {
			in.User, in.Users = UserState{}, []string{"hooks"}
			in.Spec.Databases, in.Spec.MainDatabase = []string{"hr", "sales"}, "sales"
		}, []string{"CREATE USER `app` IDENTIFIED BY '<redacted>'", "SET ROLE FOR `app` TO `readonly`, `reporting`",
			"GRANT CREATE, MATCH TO USER `app`", "GRANT DATABASE `hr` TO USER `app`", "GRANT DATABASE `sales` TO USER `app`",
			"SET MAIN DATABASE `sales` FOR USER `app`"}},
		{"the default database its roles give it stays", func(in *userInput) {
			in.Spec.Databases, in.Spec.MainDatabase = []string{"sales"}, "sales"
			in.User.Databases = memgraph.DatabaseAccess{Granted: []string{"memgraph", "sales"}}
			in.MainDatabase = "sales"
		}, nil},
		{"a database granted and one denied by hand", func(in *userInput) {
			in.User.Databases = memgraph.DatabaseAccess{Granted: []string{"hr", "memgraph"}, Denied: []string{"sales"}}
		}, []string{"REVOKE DATABASE `sales` FROM USER `app`", "REVOKE DATABASE `hr` FROM USER `app`"}},
		{"every database of its own by hand: revoked, then the declared ones again", func(in *userInput) {
			in.User.Databases = memgraph.DatabaseAccess{All: true}
		}, []string{"REVOKE DATABASE * FROM USER `app`", "GRANT DATABASE `memgraph` TO USER `app`", "SET MAIN DATABASE `memgraph` FOR USER `app`"}},
		{"every database declared", func(in *userInput) { in.Spec.Databases = []string{"*"} },
			[]string{"GRANT DATABASE * TO USER `app`"}},
		{"a role's database access drifted", func(in *userInput) {
			r := in.Roles["reporting"]
			r.Databases = memgraph.DatabaseAccess{All: true}
			in.Roles["reporting"] = r
		}, []string{"REVOKE DATABASE * FROM ROLE `reporting`", "GRANT DATABASE `memgraph` TO ROLE `reporting`"}},
		{"a main database the status does not record", func(in *userInput) { in.MainDatabase = "" },
			[]string{"SET MAIN DATABASE `memgraph` FOR USER `app`"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := convergedApp()
			tc.edit(&in)
			got := planUser(in)
			if diff := cmp.Diff(tc.want, texts(got.Commands)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			for _, c := range got.Commands {
				if err := memgraph.ValidateAuthStatement(withHash(c.AuthStatement)); err != nil {
					t.Errorf("%s would not be sent: %v", c.Text(), err)
				}
				if c.HookUser != (c.Target.Name == "hooks") {
					t.Errorf("%s: HookUser %v", c.Text(), c.HookUser)
				}
			}
		})
	}
}

// withHash gives a statement that carries a password a bcrypt hash, as the hook does.
func withHash(s memgraph.AuthStatement) memgraph.AuthStatement {
	if s.Kind == memgraph.AuthCreateUser || s.Kind == memgraph.AuthSetPassword {
		s.Password = memgraph.PasswordHash("bcrypt:$2a$04$Q5D9zQLcZYzQI3T9Y.I5jewgI4Ql6hRTZuE502eO0RI/yrGamRJda")
	}
	return s
}

// A plan applied to the state it leads to plans nothing more: every statement planUser sends
// moves the MAIN to the declaration, never around it.
func TestAPlannedUserConverges(t *testing.T) {
	in := convergedApp()
	if got := planUser(in); len(got.Commands) != 0 || got.MainDatabase != memgraph.DefaultDatabase {
		t.Fatalf("converged input plans %v", texts(got.Commands))
	}
}

func TestPlanDrop(t *testing.T) {
	if got := texts(planDrop("app", []string{"app", "hooks"})); !cmp.Equal(got, []string{"DROP USER `app`"}) {
		t.Errorf("planDrop of an existing user: %v", got)
	}
	if got := planDrop("app", []string{"hooks"}); got != nil {
		t.Errorf("planDrop of a user that is gone: %v", texts(got))
	}
}

func TestUserWaits(t *testing.T) {
	ok := userGate{Cluster: "memgraph", ClusterFound: true, ClusterHasAuth: true, HookUser: "hooks", Username: "app"}
	for _, tc := range []struct {
		name   string
		edit   func(g *userGate)
		reason string
		failed bool
	}{
		{"nothing in the way", func(*userGate) {}, "", false},
		{"no cluster", func(g *userGate) { g.ClusterFound = false }, ReasonUserClusterNotFound, false},
		{"a cluster without spec.auth", func(g *userGate) { g.ClusterHasAuth = false }, ReasonClusterWithoutAuth, true},
		{"the hook's own user", func(g *userGate) { g.Username = "HOOKS" }, ReasonReservedUser, true},
		{"an undeclared role", func(g *userGate) { g.UndeclaredRoles = []string{"nope"} }, ReasonUnknownRole, true},
		{"a spec admission refuses", func(g *userGate) { g.SpecProblems = []string{"spec.privileges: …"} }, ReasonUserSpecInvalid, true},
		{"a cluster the hook refuses", func(g *userGate) { g.ClusterProblem = "…" }, ReasonUserClusterInvalid, true},
		{"a hibernating cluster", func(g *userGate) { g.Hibernated = true }, ReasonUserClusterHibernate, false},
		{"the cluster's user-access Secret missing or stale", func(g *userGate) { g.AccessPending = "Secret … follows generation 1" }, ReasonAccessSecretPending, false},
		{"a stale copy names no hook user yet", func(g *userGate) { g.AccessPending, g.HookUser, g.Username = "…", "", "hooks" }, ReasonAccessSecretPending, false},
		{"a cluster without spec.auth has no copy to wait for", func(g *userGate) { g.ClusterHasAuth, g.AccessPending = false, "…" }, ReasonClusterWithoutAuth, true},
		{"spec.auth's Secret missing", func(g *userGate) { g.HookCredentials = "Secret … does not exist" }, ReasonHookCredentials, false},
		{"the password Secret missing", func(g *userGate) { g.PasswordProblem = "Secret … does not exist" }, ReasonPasswordSecret, false},
		{"the generated Secret on its way", func(g *userGate) { g.Generating = true }, ReasonCredentialsPending, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := ok
			tc.edit(&g)
			w := userWaits(g)
			if w.Reason != tc.reason || w.Failed != tc.failed {
				t.Errorf("userWaits = %+v, want reason %q failed %v", w, tc.reason, tc.failed)
			}
			if tc.reason != "" && w.Message == "" {
				t.Error("no message")
			}
		})
	}
}

func TestRolesAUserMayName(t *testing.T) {
	spec := appSpec()
	spec.Roles = []string{"admin", "nope", "readonly", "reporting"}
	declared := map[string]RoleSpec{"reporting": reporting()}
	if got := undeclaredRoles(spec, declared); !cmp.Equal(got, []string{"nope"}) {
		t.Errorf("UndeclaredRoles = %v", got)
	}
	spec.Roles = []string{"admin", "readonly", "reporting"}
	shown := []memgraph.RoleInfo{{Name: "readonly", Builtin: true}}
	if got := missingBuiltinRoles(spec, declared, []string{"hooks"}, shown); !cmp.Equal(got, []string{"admin"}) {
		t.Errorf("missingBuiltinRoles = %v", got)
	}
	if got := missingBuiltinRoles(spec, declared, nil, nil); got != nil {
		t.Errorf("missingBuiltinRoles on a MAIN whose first user the pass creates = %v", got)
	}
}

func TestDeclaredUser(t *testing.T) {
	u := &v1alpha1.MemgraphUser{ObjectMeta: metav1.ObjectMeta{Name: "app-reader"}, Spec: v1alpha1.MemgraphUserSpec{Cluster: "memgraph",
		Roles: []string{"reporting", "readonly", "reporting"}, Privileges: []v1alpha1.MemgraphPrivilege{"MATCH", "CREATE"}}}
	want := UserSpec{Username: "app-reader", Roles: []string{"readonly", "reporting"}, Privileges: PrivilegeSet{Names: []string{"CREATE", "MATCH"}},
		Databases: []string{"memgraph"}, MainDatabase: "memgraph"}
	if diff := cmp.Diff(want, declaredUser(u)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	u.Spec.Username, u.Spec.Privileges, u.Spec.Databases = "reader", []v1alpha1.MemgraphPrivilege{v1alpha1.PrivilegeAll}, []string{"sales", "*"}
	got := declaredUser(u)
	if got.Username != "reader" || !got.Privileges.All || !cmp.Equal(got.Databases, []string{"*"}) {
		t.Errorf("declaredUser = %+v", got)
	}
	if db := roleReadDatabase(RoleSpec{Databases: []string{"*"}}); db != "memgraph" {
		t.Errorf("roleReadDatabase(*) = %s", db)
	}
}

// The CRD's privilege enum is ALL and exactly the privileges Memgraph 3.12's GRANT names.
func TestTheCRDEnumeratesMemgraphsPrivileges(t *testing.T) {
	var grantable []v1alpha1.MemgraphPrivilege
	for _, p := range memgraph.Privileges {
		if memgraph.Grantable(p) {
			grantable = append(grantable, v1alpha1.MemgraphPrivilege(p))
		}
	}
	if diff := cmp.Diff(append([]v1alpha1.MemgraphPrivilege{v1alpha1.PrivilegeAll}, grantable...), v1alpha1.Privileges); diff != "" {
		t.Errorf("(-memgraph +topology):\n%s", diff)
	}
}

func TestUserVerdicts(t *testing.T) {
	refused := &memgraph.Error{Kind: memgraph.KindUnknown, Query: "GRANT DATABASE `hr` TO USER `app`", Message: `Tried to retrieve an unknown database "hr".`}
	for _, tc := range []struct {
		err     error
		phase   v1alpha1.UserPhase
		reason  string
		message string
	}{
		{refused, v1alpha1.UserFailed, ReasonMemgraphRefused, "GRANT DATABASE `hr` TO USER `app`: Tried to retrieve an unknown database \"hr\"."},
		{&memgraph.Error{Kind: memgraph.KindUnreachable, Message: "dial tcp: refused"}, v1alpha1.UserPending, ReasonMemgraphUnreachable, ""},
		{&memgraph.Error{Kind: memgraph.KindUnauthenticated, Message: "Authentication failure"}, v1alpha1.UserPending, ReasonHookCredentials,
			"the MAIN refused the login of the cluster's spec.auth user: Authentication failure"},
		{NoMainError{errors.New("cluster memgraph has no MAIN")}, v1alpha1.UserPending, ReasonUserNoMain, "cluster memgraph has no MAIN"},
	} {
		v := verdictOfError(tc.err)
		if v.Phase != tc.phase || v.Reason != tc.reason || tc.message != "" && v.Message != tc.message {
			t.Errorf("verdictOfError(%v) = %+v", tc.err, v)
		}
	}
	in := userInForce(convergedApp().User)
	if want := (InForce{Roles: []string{"readonly", "reporting"}, Privileges: []string{"CREATE", "MATCH", "STATS"}, Databases: []string{"memgraph"}}); !cmp.Equal(in, want) {
		t.Errorf("userInForce = %+v", in)
	}
	v := verdictInForce("app", "instance_1", in)
	if !v.Ready() || !strings.Contains(v.Message, "instance_1") || !slices.Contains(strings.Fields(v.Message), "3") {
		t.Errorf("verdictInForce = %+v", v)
	}
}
