package users

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/clustersecrets"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/wire"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph"
	"github.com/memgraph-hooks/memgraph-hooks/planner"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

func admitted(t *testing.T, generation int, spec string) *topology.Cluster {
	t.Helper()
	c, err := topology.Admit([]byte(`{"apiVersion":"memgraph.com/v1alpha1","kind":"MemgraphCluster","metadata":{"name":"mg",` +
		`"namespace":"db","uid":"u1","generation":` + strconv.Itoa(generation) + `},"spec":` + spec + `}`))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// asRelated is the user-access Secret the cluster's hook renders, as a user's request carries it.
func asRelated(t *testing.T, c *topology.Cluster, a Access) *secret {
	t.Helper()
	child, err := topology.UserAccessSecret(c, a.Data, a.Annotations)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(child)
	var s secret
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

const (
	withTLSAndAuth = `{"tls":{"secretName":"mg-tls"},"auth":{"secretName":"mg-auth"}}`
	withAuth       = `{"auth":{"secretName":"mg-auth"}}`
)

var creds = clustersecrets.Auth{Creds: &memgraph.Credentials{Username: "hooks", Password: "s3cret"}}

// What the cluster's hook copies of spec.tls and spec.auth reaches its users through the
// user-access Secret, for the generation it was copied at; what is wrong with either Secret
// reaches them in the cluster's own words; a copy that is missing or follows an older generation
// is a reason to wait, and nothing of it is used.
func TestUserAccessRoundTrip(t *testing.T) {
	trust := clustersecrets.Trust{CAPEM: []byte("the CA")}
	for _, tc := range []struct {
		name          string
		spec          string
		copiedAt, now int
		trust         clustersecrets.Trust
		auth          clustersecrets.Auth
		edit          func(a *Access) // the copy as observed, changed after the cluster's hook wrote it
		missing       bool
		want          Reach
		pending       string
	}{
		{name: "spec.tls and spec.auth", spec: withTLSAndAuth, copiedAt: 3, now: 3, trust: trust, auth: creds,
			want: Reach{CAPEM: []byte("the CA"), Auth: creds}},
		{name: "spec.auth alone: no CA", spec: withAuth, copiedAt: 3, now: 3, auth: creds, want: Reach{Auth: creds}},
		{name: "spec.tls's Secret unusable", spec: withTLSAndAuth, copiedAt: 3, now: 3, auth: creds,
			trust: clustersecrets.Trust{Problem: "Secret db/mg-tls (spec.tls.secretName) does not exist"},
			want:  Reach{TLSProblem: "Secret db/mg-tls (spec.tls.secretName) does not exist", Auth: creds}},
		{name: "spec.auth's Secret unusable", spec: withTLSAndAuth, copiedAt: 3, now: 3, trust: trust,
			auth: clustersecrets.Auth{Problem: "Secret db/mg-auth (spec.auth.secretName) has no password"},
			want: Reach{CAPEM: []byte("the CA"), Auth: clustersecrets.Auth{Problem: "Secret db/mg-auth (spec.auth.secretName) has no password"}}},
		{name: "a copy that lost a key", spec: withAuth, copiedAt: 3, now: 3, auth: creds,
			edit: func(a *Access) { delete(a.Data, topology.UserAccessPasswordKey) },
			want: Reach{Auth: clustersecrets.Auth{Problem: "Secret db/mg-user-access has no password: the cluster's hook writes it"}}},
		{name: "the copy does not exist yet", spec: withTLSAndAuth, now: 3, missing: true,
			pending: "Secret db/mg-user-access does not exist yet: MemgraphCluster mg's hook writes it on its next sync"},
		{name: "the copy follows an older generation", spec: withTLSAndAuth, copiedAt: 2, now: 3, trust: trust, auth: creds,
			pending: "Secret db/mg-user-access follows generation 2 of MemgraphCluster mg, which is at generation 3"},
		{name: "a copy without its generation", spec: withAuth, copiedAt: 3, now: 3, auth: creds,
			edit:    func(a *Access) { delete(a.Annotations, topology.AnnotationUserAccessGeneration) },
			pending: "follows generation (none) of MemgraphCluster mg"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var observed *secret
			if !tc.missing {
				a := AccessOf(admitted(t, tc.copiedAt, tc.spec), tc.trust, tc.auth)
				if tc.edit != nil {
					tc.edit(&a)
				}
				observed = asRelated(t, admitted(t, tc.copiedAt, tc.spec), a)
			}
			got, pending := usableAccess(admitted(t, tc.now, tc.spec), observed)
			if tc.pending != "" {
				if !strings.Contains(pending, tc.pending) || !strings.HasSuffix(pending, "nothing was sent to Memgraph") {
					t.Errorf("pending %q, want it to say %q", pending, tc.pending)
				}
				if diff := cmp.Diff(Reach{}, got); diff != "" {
					t.Errorf("a copy that cannot be used was read (-want +got):\n%s", diff)
				}
				return
			}
			if pending != "" {
				t.Errorf("pending %q", pending)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Reach (-want +got):\n%s", diff)
			}
		})
	}
}

// usableAccess is what a user's pass on cluster c reaches it with of the user-access Secret s,
// or why it waits for another copy instead (then it reaches nothing).
func usableAccess(c *topology.Cluster, s *secret) (Reach, string) {
	r, access := readAccess(c, s)
	u := &v1alpha1.MemgraphUser{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: c.Namespace()}, Spec: v1alpha1.MemgraphUserSpec{Cluster: c.Name()}}
	step := planner.NextUser(&planner.UserPass{User: u, Cluster: c, Access: access, Password: planner.UserPassword{Version: "app-pw/1"}}, nil)
	if done, ok := step.(planner.UserDone); ok && done.Verdict.Reason == planner.ReasonAccessSecretPending {
		return Reach{}, done.Verdict.Message
	}
	return r, ""
}

// A cluster without spec.auth keeps no copy: its users wait for spec.auth and read nothing.
func TestNoUserAccessWithoutSpecAuth(t *testing.T) {
	a := AccessOf(admitted(t, 1, `{"tls":{"secretName":"mg-tls"}}`), clustersecrets.Trust{CAPEM: []byte("the CA")}, clustersecrets.Auth{})
	if a.Data != nil || a.Annotations != nil {
		t.Errorf("AccessOf a cluster without spec.auth = %+v, want none", a)
	}
}

// The copy is a proper child: stored form, only the hook's labels and annotations, no
// server-filled field, and the values as base64.
func TestUserAccessSecretChild(t *testing.T) {
	c := admitted(t, 4, withTLSAndAuth)
	a := AccessOf(c, clustersecrets.Trust{CAPEM: []byte("the CA")}, creds)
	child, err := topology.UserAccessSecret(c, a.Data, a.Annotations)
	if err != nil {
		t.Fatal(err)
	}
	b64 := func(s string) any { return base64.StdEncoding.EncodeToString([]byte(s)) }
	want := map[string]any{
		"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
		"metadata": map[string]any{"name": "mg-user-access", "namespace": "db",
			"labels": map[string]any{"app.kubernetes.io/name": "memgraph", "app.kubernetes.io/instance": "mg",
				"app.kubernetes.io/component": "user", "app.kubernetes.io/managed-by": "memgraph-hooks"},
			"annotations": map[string]any{"memgraph.com/user-access-generation": "4"}},
		"data": map[string]any{"ca.crt": b64("the CA"), "username": b64("hooks"), "password": b64("s3cret")},
	}
	if diff := cmp.Diff(want, child); diff != "" {
		t.Errorf("user-access Secret (-want +got):\n%s", diff)
	}
}

// A MemgraphUser's customize asks for its cluster and for Secrets by name alone — the cluster's
// user-access Secret and spec.passwordSecret's — never for every Secret of its namespace.
func TestCustomizeAsksForSecretsByName(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec string
		want []string
	}{
		{"a generated password", `{"cluster":"mg"}`, []string{"mg-user-access"}},
		{"spec.passwordSecret", `{"cluster":"mg","passwordSecret":{"name":"app-pw"}}`, []string{"mg-user-access", "app-pw"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctl := New(Config{})
			body := `{"parent":{"apiVersion":"memgraph.com/v1alpha1","kind":"MemgraphUser","metadata":{"name":"app","namespace":"db",` +
				`"uid":"u2","generation":1},"spec":` + tc.spec + `}}`
			answer, err := ctl.Customize(httptest.NewRequest(http.MethodPost, "/user/customize", strings.NewReader(body)))
			if err != nil {
				t.Fatal(err)
			}
			want := wire.CustomizeResponse{RelatedResources: []wire.RelatedRule{
				{APIVersion: "memgraph.com/v1alpha1", Resource: "memgraphclusters", Namespace: "db", Names: []string{"mg"}},
				{APIVersion: "v1", Resource: "secrets", Namespace: "db", Names: tc.want},
			}}
			if diff := cmp.Diff(want, answer); diff != "" {
				t.Errorf("customize answer (-want +got):\n%s", diff)
			}
		})
	}
}
