package hooks_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"golang.org/x/crypto/bcrypt"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/memgraph/sim"
)

// userRig plays Metacontroller for the MemgraphUser CompositeController of manifests/ around the
// real hook and a converged 3+2 cluster on the simulator (spec.auth set, spec.roles declaring
// reporting): it sends each user as parent with its last status, its generated Secret as applied
// (a new resourceVersion whenever its content changed), and as related objects the cluster and
// the Secrets of the namespace — the cluster's Secret children as its last sync returned them
// among them — that the user's customize answer names, as Metacontroller selects them; and it
// plays the finalize hook.
type userRig struct {
	t         *testing.T
	h         *harness
	logs      *lockedBuffer
	users     map[string]*userObject
	passwords map[string]any // spec.passwordSecret Secrets, by v2 key
	rv        int
	generated int
	bodies    []string // every response, as JSON
}

type userObject struct {
	spec        map[string]any
	annotations map[string]any
	status      map[string]any
	child       map[string]any // the generated Secret as applied, with its resourceVersion
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

const reportingRole = "reporting"

// newUserRig is the rig on a converged cluster. With hookUser the data instances start with the
// hook's user (an operator created it); without, they have no user at all.
func newUserRig(t *testing.T, hookUser bool, opts ...harnessOption) *userRig {
	r := &userRig{t: t, logs: &lockedBuffer{}, users: map[string]*userObject{}, passwords: map[string]any{}}
	logger := slog.New(slog.NewJSONHandler(r.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	opts = append([]harnessOption{func(c *harnessConfig) {
		c.hook.Logger, c.hook.PasswordHashCost = logger, bcrypt.MinCost
		c.hook.UserPassword = func() (string, error) { r.generated++; return fmt.Sprintf("generated-password-%d", r.generated), nil }
	}}, opts...)
	r.h = newHarness(t, 3, 2, opts...)
	if hookUser {
		r.h.dataAuth = &sim.Auth{Username: authUser, Password: authPassword}
	}
	r.h.spec["auth"] = map[string]any{"secretName": authSecret}
	r.h.spec["roles"] = []any{map[string]any{"name": reportingRole, "privileges": []any{"MATCH", "STATS"}}}
	r.h.secrets = map[string]any{"default/" + authSecret: authSecretObject(authUser, authPassword)}
	r.h.bootstrap()
	r.h.assertConverged()
	return r
}

// declare adds (or replaces) MemgraphUser name with spec.
func (r *userRig) declare(name string, spec map[string]any) *userObject {
	u := r.users[name]
	if u == nil {
		u = &userObject{}
		r.users[name] = u
	}
	if _, ok := spec["cluster"]; !ok {
		spec["cluster"] = "memgraph"
	}
	u.spec = spec
	return u
}

func (r *userRig) request(name string, finalizing bool) map[string]any {
	u := r.users[name]
	meta := map[string]any{"name": name, "namespace": "default", "uid": "uid-" + name, "generation": 1}
	if u.annotations != nil {
		meta["annotations"] = u.annotations
	}
	children := map[string]any{}
	if u.child != nil {
		children["default/"+v1alpha1.UserSecretName(name)] = u.child
	}
	parent := map[string]any{"apiVersion": "memgraph.com/v1alpha1", "kind": "MemgraphUser", "metadata": meta,
		"spec": u.spec, "status": u.status}
	return map[string]any{
		"controller": map[string]any{"kind": "CompositeController"},
		"parent":     parent,
		"children":   map[string]any{"Secret.v1": children},
		"related":    map[string]any{"MemgraphCluster.memgraph.com/v1alpha1": map[string]any{"default/memgraph": r.h.parent()}, "Secret.v1": r.relatedSecrets(parent)},
		"finalizing": finalizing,
	}
}

// namespaceSecrets are every Secret of the namespace, by v2 key: the license, the cluster's
// Secrets, the password Secrets, and the cluster's Secret children as last returned.
func (r *userRig) namespaceSecrets() map[string]any {
	secrets := map[string]any{"default/memgraph-secrets": licenseSecret("default")}
	for k, v := range r.h.secrets {
		secrets[k] = v
	}
	for k, v := range r.passwords {
		secrets[k] = v
	}
	for key, child := range r.h.children {
		if name, ok := strings.CutPrefix(key, "Secret/"); ok {
			secrets["default/"+name] = child
		}
	}
	return secrets
}

// relatedSecrets are the Secrets of the namespace the user's customize answer names, selected as
// Metacontroller v4.17.2 selects a rule with names (every rule here has them).
func (r *userRig) relatedSecrets(parent map[string]any) map[string]any {
	r.t.Helper()
	code, body := r.h.post("/user/customize", map[string]any{"controller": map[string]any{"kind": "CompositeController"}, "parent": parent})
	if code != 200 {
		r.t.Fatalf("/user/customize answered %d: %s", code, body)
	}
	var answer struct {
		RelatedResources []struct {
			Resource string   `json:"resource"`
			Names    []string `json:"names"`
		} `json:"relatedResources"`
	}
	if err := json.Unmarshal(body, &answer); err != nil {
		r.t.Fatal(err)
	}
	out := map[string]any{}
	for key, s := range r.namespaceSecrets() {
		for _, rule := range answer.RelatedResources {
			if rule.Resource != "secrets" {
				continue
			}
			if len(rule.Names) == 0 {
				r.t.Fatalf("the user's customize asks for every Secret of the namespace: %s", body)
			}
			if slices.Contains(rule.Names, strings.TrimPrefix(key, "default/")) {
				out[key] = s
			}
		}
	}
	return out
}

type userResponse struct {
	Status    v1alpha1.MemgraphUserStatus `json:"status"`
	Children  []map[string]any            `json:"children"`
	Resync    float64                     `json:"resyncAfterSeconds"`
	Finalized bool                        `json:"finalized"`
	Plan      []string                    `json:"plan"`
}

// sync posts user name's sync (or finalize) hook and applies the answer as Metacontroller does.
func (r *userRig) sync(name string) userResponse { return r.call(name, "", false) }

func (r *userRig) call(name, query string, finalizing bool) userResponse {
	r.t.Helper()
	code, body := r.h.post("/user/sync"+query, r.request(name, finalizing))
	r.bodies = append(r.bodies, string(body))
	if code != 200 {
		r.t.Fatalf("/user/sync answered %d: %s", code, body)
	}
	var resp userResponse
	if err := json.Unmarshal(body, &resp); err != nil {
		r.t.Fatal(err)
	}
	if query != "" {
		return resp
	}
	u := r.users[name]
	status := map[string]any{}
	raw, _ := json.Marshal(resp.Status)
	_ = json.Unmarshal(raw, &status)
	u.status = status
	if len(resp.Children) == 1 {
		child := resp.Children[0]
		if u.child == nil || !reflect.DeepEqual(stripVersion(u.child), child) {
			r.rv++
			child = deepCopy(child)
			child["metadata"].(map[string]any)["resourceVersion"] = fmt.Sprint(r.rv)
			u.child = child
		}
	}
	return resp
}

func stripVersion(obj map[string]any) map[string]any {
	out := deepCopy(obj)
	delete(out["metadata"].(map[string]any), "resourceVersion")
	return out
}

// secretValue is key of the user's generated Secret as applied.
func (r *userRig) secretValue(name, key string) string {
	r.t.Helper()
	u := r.users[name]
	if u.child == nil {
		r.t.Fatalf("user %s has no generated Secret", name)
	}
	raw, err := base64.StdEncoding.DecodeString(u.child["data"].(map[string]any)[key].(string))
	if err != nil {
		r.t.Fatal(err)
	}
	return string(raw)
}

// run sends one query as user with password to the MAIN over the real driver: "" when it
// succeeded, else the FAILURE's message.
func (r *userRig) run(user, password, query string) string {
	r.t.Helper()
	_, msg := r.query(user, password, query)
	return msg
}

// query runs one query as user with password on the MAIN over the real driver, auto-commit
// (Memgraph refuses auth queries in a transaction): its records and "" when it succeeded, else
// the FAILURE's message.
func (r *userRig) query(user, password, query string) ([]*neo4j.Record, string) {
	r.t.Helper()
	drv, err := neo4j.NewDriverWithContext("bolt://"+r.h.world.Resolve(r.mainBolt()), neo4j.BasicAuth(user, password, ""))
	if err != nil {
		r.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	defer drv.Close(ctx)
	session := drv.NewSession(ctx, neo4j.SessionConfig{})
	defer session.Close(ctx)
	var records []*neo4j.Record
	res, err := session.Run(ctx, query, nil)
	if err == nil {
		records, err = res.Collect(ctx)
	}
	var ne *neo4j.Neo4jError
	switch {
	case err == nil:
		return records, ""
	case errors.As(err, &ne):
		return nil, ne.Msg
	}
	return nil, err.Error()
}

// sentStatements are the auth statements the data instances received since the log was reset.
func (r *userRig) sentStatements() []string {
	var out []string
	for _, q := range r.h.world.Queries() {
		if !strings.HasPrefix(q.Text, "SHOW ") && !strings.HasPrefix(q.Host, "memgraph-coordinator") {
			out = append(out, q.Text)
		}
	}
	return out
}

// redacted is the statements with their bcrypt literal written <redacted>, as the hook shows them.
func redacted(statements []string) []string {
	out := make([]string, len(statements))
	for i, s := range statements {
		if at := strings.Index(s, "'bcrypt:$2a$"); at >= 0 {
			s = s[:at] + "'<redacted>'"
		}
		out[i] = s
	}
	return out
}

// assertReady checks the user's phase and Ready condition.
func (r *userRig) assertPhase(resp userResponse, phase v1alpha1.UserPhase, reason string) string {
	r.t.Helper()
	var ready *struct{ status, reason, message string }
	for _, c := range resp.Status.Conditions {
		if c.Type == "Ready" {
			ready = &struct{ status, reason, message string }{string(c.Status), c.Reason, c.Message}
		}
	}
	if ready == nil || resp.Status.Phase != phase || ready.reason != reason {
		r.t.Fatalf("phase %s, Ready %+v; want %s/%s", resp.Status.Phase, ready, phase, reason)
	}
	return ready.message
}

// assertSecretsKept checks that no response body and no log line holds any of secrets.
func (r *userRig) assertSecretsKept(secrets ...string) {
	r.t.Helper()
	for _, s := range secrets {
		for i, body := range r.bodies {
			if strings.Contains(body, s) {
				r.t.Errorf("response %d shows a password: %s", i, body)
			}
		}
		if strings.Contains(r.logs.String(), s) {
			r.t.Errorf("the hook's log shows a password:\n%s", r.logs.String())
		}
	}
	if strings.Contains(r.logs.String(), "$2a$") {
		r.t.Errorf("the hook's log shows a password hash")
	}
	for _, body := range r.bodies {
		if strings.Contains(body, "$2a$") {
			r.t.Errorf("a response shows a password hash: %s", body)
		}
	}
}
