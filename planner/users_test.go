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
func convergedApp() UserInput {
	readonly := RoleState{Exists: true, Builtin: true, Databases: defaultDBAccess}
	return UserInput{Spec: appSpec(), Declared: map[string]RoleSpec{"reporting": reporting()}, HookUser: "hooks",
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
		edit func(in *UserInput)
		want []string
	}{
		{"converged: nothing", func(*UserInput) {}, nil},
		{"a new user and role on a MAIN with users", func(in *UserInput) {
			in.Users = []string{"hooks"}
			in.Roles = map[string]RoleState{"readonly": in.Roles["readonly"]}
			in.User = UserState{}
		}, []string{
			"CREATE ROLE IF NOT EXISTS `reporting`", "GRANT MATCH, STATS TO ROLE `reporting`",
			"CREATE USER `app` IDENTIFIED BY '<redacted>'", "SET ROLE FOR `app` TO `readonly`, `reporting`", "GRANT CREATE, MATCH TO USER `app`",
		}},
		{"a MAIN without any user: the hook's own user first", func(in *UserInput) {
			in.Users, in.Roles, in.User = nil, map[string]RoleState{}, UserState{}
			in.Spec.Roles, in.Spec.Privileges = nil, PrivilegeSet{All: true}
		}, []string{"CREATE USER `hooks` IDENTIFIED BY '<redacted>'", "CREATE USER `app` IDENTIFIED BY '<redacted>'", "GRANT ALL PRIVILEGES TO USER `app`"}},
		{"the password Secret changed", func(in *UserInput) { in.PasswordChanged = true }, []string{"SET PASSWORD FOR `app` TO '<redacted>'"}},
		{"a privilege granted and one denied by hand", func(in *UserInput) {
			in.User.Privileges = append(privilegeRows("GRANT", "USER", "CREATE", "DUMP"), privilegeRows("DENY", "USER", "MATCH")...)
		}, []string{"REVOKE DUMP FROM USER `app`", "GRANT MATCH TO USER `app`"}},
		{"a role's privilege revoked by hand", func(in *UserInput) {
			r := in.Roles["reporting"]
			r.Privileges = privilegeRows("GRANT", "ROLE", "MATCH")
			in.Roles["reporting"] = r
		}, []string{"GRANT STATS TO ROLE `reporting`"}},
		{"a role removed from the user by hand", func(in *UserInput) { in.User.Roles = []string{"readonly"} },
			[]string{"SET ROLE FOR `app` TO `readonly`, `reporting`"}},
		{"every role removed from the declaration", func(in *UserInput) { in.Spec.Roles = nil },
			[]string{"CLEAR ROLE FOR `app`"}},
		{"ALL on a user missing one", func(in *UserInput) { in.Spec.Privileges = PrivilegeSet{All: true} },
			[]string{"GRANT ALL PRIVILEGES TO USER `app`"}},
		{"from ALL back to a list: REVOKE cannot name SERVER_SIDE_DESCRIPTIONS", func(in *UserInput) {
			in.User.Privileges = privilegeRows("GRANT", "USER", memgraph.Privileges...)
		}, []string{"REVOKE ALL PRIVILEGES FROM USER `app`", "GRANT CREATE, MATCH TO USER `app`"}},
		{"a new user of its own databases", func(in *UserInput) {
			in.User, in.Users = UserState{}, []string{"hooks"}
			in.Spec.Databases, in.Spec.MainDatabase = []string{"hr", "sales"}, "sales"
		}, []string{"CREATE USER `app` IDENTIFIED BY '<redacted>'", "SET ROLE FOR `app` TO `readonly`, `reporting`",
			"GRANT CREATE, MATCH TO USER `app`", "GRANT DATABASE `hr` TO USER `app`", "GRANT DATABASE `sales` TO USER `app`",
			"SET MAIN DATABASE `sales` FOR USER `app`"}},
		{"the default database its roles give it stays", func(in *UserInput) {
			in.Spec.Databases, in.Spec.MainDatabase = []string{"sales"}, "sales"
			in.User.Databases = memgraph.DatabaseAccess{Granted: []string{"memgraph", "sales"}}
			in.MainDatabase = "sales"
		}, nil},
		{"a database granted and one denied by hand", func(in *UserInput) {
			in.User.Databases = memgraph.DatabaseAccess{Granted: []string{"hr", "memgraph"}, Denied: []string{"sales"}}
		}, []string{"REVOKE DATABASE `sales` FROM USER `app`", "REVOKE DATABASE `hr` FROM USER `app`"}},
		{"every database of its own by hand: revoked, then the declared ones again", func(in *UserInput) {
			in.User.Databases = memgraph.DatabaseAccess{All: true}
		}, []string{"REVOKE DATABASE * FROM USER `app`", "GRANT DATABASE `memgraph` TO USER `app`", "SET MAIN DATABASE `memgraph` FOR USER `app`"}},
		{"every database declared", func(in *UserInput) { in.Spec.Databases = []string{"*"} },
			[]string{"GRANT DATABASE * TO USER `app`"}},
		{"a role's database access drifted", func(in *UserInput) {
			r := in.Roles["reporting"]
			r.Databases = memgraph.DatabaseAccess{All: true}
			in.Roles["reporting"] = r
		}, []string{"REVOKE DATABASE * FROM ROLE `reporting`", "GRANT DATABASE `memgraph` TO ROLE `reporting`"}},
		{"a main database the status does not record", func(in *UserInput) { in.MainDatabase = "" },
			[]string{"SET MAIN DATABASE `memgraph` FOR USER `app`"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := convergedApp()
			tc.edit(&in)
			got := PlanUser(in)
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

// A plan applied to the state it leads to plans nothing more: every statement PlanUser sends
// moves the MAIN to the declaration, never around it.
func TestAPlannedUserConverges(t *testing.T) {
	in := convergedApp()
	if got := PlanUser(in); len(got.Commands) != 0 || got.MainDatabase != memgraph.DefaultDatabase {
		t.Fatalf("converged input plans %v", texts(got.Commands))
	}
}

func TestPlanDrop(t *testing.T) {
	if got := texts(PlanDrop("app", []string{"app", "hooks"})); !cmp.Equal(got, []string{"DROP USER `app`"}) {
		t.Errorf("PlanDrop of an existing user: %v", got)
	}
	if got := PlanDrop("app", []string{"hooks"}); got != nil {
		t.Errorf("PlanDrop of a user that is gone: %v", texts(got))
	}
}

func TestUserWaits(t *testing.T) {
	ok := UserGate{Cluster: "memgraph", ClusterFound: true, ClusterHasAuth: true, HookUser: "hooks", Username: "app"}
	for _, tc := range []struct {
		name   string
		edit   func(g *UserGate)
		reason string
		failed bool
	}{
		{"nothing in the way", func(*UserGate) {}, "", false},
		{"no cluster", func(g *UserGate) { g.ClusterFound = false }, ReasonUserClusterNotFound, false},
		{"a cluster without spec.auth", func(g *UserGate) { g.ClusterHasAuth = false }, ReasonClusterWithoutAuth, true},
		{"the hook's own user", func(g *UserGate) { g.Username = "HOOKS" }, ReasonReservedUser, true},
		{"an undeclared role", func(g *UserGate) { g.UndeclaredRoles = []string{"nope"} }, ReasonUnknownRole, true},
		{"a spec admission refuses", func(g *UserGate) { g.SpecProblems = []string{"spec.privileges: …"} }, ReasonUserSpecInvalid, true},
		{"a cluster the hook refuses", func(g *UserGate) { g.ClusterProblem = "…" }, ReasonUserClusterInvalid, true},
		{"a hibernating cluster", func(g *UserGate) { g.Hibernated = true }, ReasonUserClusterHibernate, false},
		{"the cluster's user-access Secret missing or stale", func(g *UserGate) { g.AccessPending = "Secret … follows generation 1" }, ReasonAccessSecretPending, false},
		{"a stale copy names no hook user yet", func(g *UserGate) { g.AccessPending, g.HookUser, g.Username = "…", "", "hooks" }, ReasonAccessSecretPending, false},
		{"a cluster without spec.auth has no copy to wait for", func(g *UserGate) { g.ClusterHasAuth, g.AccessPending = false, "…" }, ReasonClusterWithoutAuth, true},
		{"spec.auth's Secret missing", func(g *UserGate) { g.HookCredentials = "Secret … does not exist" }, ReasonHookCredentials, false},
		{"the password Secret missing", func(g *UserGate) { g.PasswordProblem = "Secret … does not exist" }, ReasonPasswordSecret, false},
		{"the generated Secret on its way", func(g *UserGate) { g.Generating = true }, ReasonCredentialsPending, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := ok
			tc.edit(&g)
			w := UserWaits(g)
			if w.Reason != tc.reason || w.Failed != tc.failed {
				t.Errorf("UserWaits = %+v, want reason %q failed %v", w, tc.reason, tc.failed)
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
	if got := UndeclaredRoles(spec, declared); !cmp.Equal(got, []string{"nope"}) {
		t.Errorf("UndeclaredRoles = %v", got)
	}
	spec.Roles = []string{"admin", "readonly", "reporting"}
	shown := []memgraph.RoleInfo{{Name: "readonly", Builtin: true}}
	if got := MissingBuiltinRoles(spec, declared, []string{"hooks"}, shown); !cmp.Equal(got, []string{"admin"}) {
		t.Errorf("MissingBuiltinRoles = %v", got)
	}
	if got := MissingBuiltinRoles(spec, declared, nil, nil); got != nil {
		t.Errorf("MissingBuiltinRoles on a MAIN whose first user the pass creates = %v", got)
	}
}

func TestDeclaredUser(t *testing.T) {
	u := &v1alpha1.MemgraphUser{ObjectMeta: metav1.ObjectMeta{Name: "app-reader"}, Spec: v1alpha1.MemgraphUserSpec{Cluster: "memgraph",
		Roles: []string{"reporting", "readonly", "reporting"}, Privileges: []v1alpha1.MemgraphPrivilege{"MATCH", "CREATE"}}}
	want := UserSpec{Username: "app-reader", Roles: []string{"readonly", "reporting"}, Privileges: PrivilegeSet{Names: []string{"CREATE", "MATCH"}},
		Databases: []string{"memgraph"}, MainDatabase: "memgraph"}
	if diff := cmp.Diff(want, DeclaredUser(u)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	u.Spec.Username, u.Spec.Privileges, u.Spec.Databases = "reader", []v1alpha1.MemgraphPrivilege{v1alpha1.PrivilegeAll}, []string{"sales", "*"}
	got := DeclaredUser(u)
	if got.Username != "reader" || !got.Privileges.All || !cmp.Equal(got.Databases, []string{"*"}) {
		t.Errorf("DeclaredUser = %+v", got)
	}
	if db := RoleReadDatabase(RoleSpec{Databases: []string{"*"}}); db != "memgraph" {
		t.Errorf("RoleReadDatabase(*) = %s", db)
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
		v := VerdictOfError(tc.err)
		if v.Phase != tc.phase || v.Reason != tc.reason || tc.message != "" && v.Message != tc.message {
			t.Errorf("VerdictOfError(%v) = %+v", tc.err, v)
		}
	}
	in := UserInForce(convergedApp().User)
	if want := (InForce{Roles: []string{"readonly", "reporting"}, Privileges: []string{"CREATE", "MATCH", "STATS"}, Databases: []string{"memgraph"}}); !cmp.Equal(in, want) {
		t.Errorf("UserInForce = %+v", in)
	}
	v := VerdictInForce("app", "instance_1", in)
	if !v.Ready() || !strings.Contains(v.Message, "instance_1") || !slices.Contains(strings.Fields(v.Message), "3") {
		t.Errorf("VerdictInForce = %+v", v)
	}
}
