package users

import (
	"encoding/base64"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
)

// A generated password is 32 characters of letters and digits, a new one each time.
func TestNewPassword(t *testing.T) {
	seen := map[string]bool{}
	for range 200 {
		p, err := NewPassword()
		if err != nil {
			t.Fatal(err)
		}
		if len(p) != 32 || strings.Trim(p, passwordAlphabet) != "" {
			t.Fatalf("password %q: want 32 letters and digits", p)
		}
		if seen[p] {
			t.Fatalf("password %q drawn twice", p)
		}
		seen[p] = true
	}
}

// Until Metacontroller has created the generated Secret, every call returns the same password for
// the same rotation request; a new request, or a user created again (another uid), gets another.
func TestGeneratedPasswordsWaitForTheirSecret(t *testing.T) {
	ctl := New(Config{})
	u := &v1alpha1.MemgraphUser{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "prod", UID: "u1"}, Spec: v1alpha1.MemgraphUserSpec{Cluster: "memgraph"}}
	first, err := ctl.credentialsOf(u, &observation{})
	if err != nil || !first.pending || first.password != "" {
		t.Fatalf("first call: %+v, %v", first, err)
	}
	again, _ := ctl.credentialsOf(u, &observation{})
	if secretPassword(t, again.child) != secretPassword(t, first.child) {
		t.Error("a second call before the Secret exists generated another password")
	}
	s := &secret{Data: map[string]string{"password": again.child["data"].(map[string]any)["password"].(string)}}
	s.Metadata.ResourceVersion = "5"
	got, _ := ctl.credentialsOf(u, &observation{generated: s})
	if got.pending || got.password != secretPassword(t, first.child) || got.version != "app-credentials/5" {
		t.Errorf("once observed: %+v", got)
	}
	u.Annotations = map[string]string{v1alpha1.AnnotationRotatePassword: "now"}
	rotated, _ := ctl.credentialsOf(u, &observation{generated: s})
	if !rotated.pending || secretPassword(t, rotated.child) == got.password {
		t.Errorf("a rotation request kept the password: %+v", rotated)
	}
	if rotated.child["metadata"].(map[string]any)["annotations"].(map[string]any)[v1alpha1.AnnotationRotatedFor] != "now" {
		t.Errorf("the rotated Secret does not record the request: %v", rotated.child["metadata"])
	}
}

func secretPassword(t *testing.T, child map[string]any) string {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(child["data"].(map[string]any)["password"].(string))
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// A password Secret's problems name the Secret and never its content.
func TestSuppliedPasswordProblems(t *testing.T) {
	u := &v1alpha1.MemgraphUser{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "prod"}}
	enc := base64.StdEncoding.EncodeToString
	for _, tc := range []struct {
		data map[string]string
		want string
	}{
		{nil, "has no password"},
		{map[string]string{"password": "!!"}, "not valid base64"},
		{map[string]string{"password": enc([]byte(strings.Repeat("s3cret", 13)))}, "78 bytes"},
	} {
		got := suppliedPassword(u, "pw", &secret{Data: tc.data})
		if !strings.Contains(got.problem, tc.want) || !strings.Contains(got.problem, "Secret prod/pw (spec.passwordSecret)") || strings.Contains(got.problem, "s3cret") {
			t.Errorf("problem %q, want it to say %q", got.problem, tc.want)
		}
	}
	if got := suppliedPassword(u, "pw", nil); !strings.Contains(got.problem, "does not exist") {
		t.Errorf("no Secret: %q", got.problem)
	}
}
