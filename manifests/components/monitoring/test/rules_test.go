package test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"
)

const ruleTestsGlob = "../tests/*.yaml"

type ruleTestFile struct {
	RuleFiles []string `json:"rule_files"`
	Tests     []struct {
		Name          string `json:"name"`
		AlertRuleTest []struct {
			Alertname string `json:"alertname"`
			ExpAlerts []any  `json:"exp_alerts"`
		} `json:"alert_rule_test"`
	} `json:"tests"`
}

func ruleTestFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(ruleTestsGlob)
	if err != nil || len(files) == 0 {
		t.Fatalf("no rule unit tests match %s (%v)", ruleTestsGlob, err)
	}
	return files
}

// Every alert has a promtool unit test in which it fires, and one in which it stays quiet.
func TestEveryAlertHasRuleUnitTests(t *testing.T) {
	fires, quiet := map[string]bool{}, map[string]bool{}
	for _, path := range ruleTestFiles(t) {
		var f ruleTestFile // promtool's format has more fields than read here
		load(t, path, &f)
		for _, test := range f.Tests {
			for _, a := range test.AlertRuleTest {
				if len(a.ExpAlerts) > 0 {
					fires[a.Alertname] = true
				} else {
					quiet[a.Alertname] = true
				}
			}
		}
	}
	for _, g := range loadRules(t).Spec.Groups {
		for _, r := range g.Rules {
			if !fires[r.Alert] || !quiet[r.Alert] {
				t.Errorf("alert %s: a unit test where it fires: %v, where it stays quiet: %v", r.Alert, fires[r.Alert], quiet[r.Alert])
			}
		}
	}
}

// The promtool rule unit tests pass against the PrometheusRule's groups. PROMTOOL names the
// promtool binary; `make monitoring-rules` builds it (build-promtool.sh) and sets it.
func TestPromtoolRuleUnitTests(t *testing.T) {
	promtool := os.Getenv("PROMTOOL")
	if promtool == "" {
		t.Fatal("PROMTOOL is not set: run `make monitoring-rules`, which builds promtool once and runs this test")
	}
	dir := t.TempDir()
	groups, err := yaml.Marshal(map[string]any{"groups": loadRules(t).Spec.Groups})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "rules.yaml"), groups, 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"test", "rules"}
	for _, path := range ruleTestFiles(t) {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		copied := filepath.Join(dir, filepath.Base(path))
		if err := os.WriteFile(copied, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, copied)
	}
	out, err := exec.Command(promtool, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool %v: %v\n%s", args, err, out)
	}
	t.Logf("%s", out)
}
