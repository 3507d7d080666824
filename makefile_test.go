package memgraphhooks_test

import (
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var makeTarget = regexp.MustCompile(`(?m)^([a-z][a-z0-9-]*):(.*)$`)

// Every target of the Makefile says what it does in a `##` comment, and a bare `make` lists
// them all (make help) without running anything else: no generator, no go command.
func TestMakeHelpListsEveryTarget(t *testing.T) {
	var targets []string
	for _, m := range makeTarget.FindAllStringSubmatch(readDoc(t, "Makefile"), -1) {
		if strings.HasPrefix(m[2], "=") { // NAME := value
			continue
		}
		targets = append(targets, m[1])
		if !strings.Contains(m[2], " ## ") {
			t.Errorf("make target %s has no `## what it does` comment", m[1])
		}
	}
	if len(targets) < 20 || !slices.Contains(targets, "help") || !slices.Contains(targets, "e2e") {
		t.Fatalf("found targets %v: the Makefile parse is broken", targets)
	}
	makeTool, err := exec.LookPath("make")
	if err != nil {
		t.Skip("make is not on PATH")
	}
	// Any go, controller-gen or docker the bare make ran would fail.
	out, err := exec.Command(makeTool, "--no-print-directory", "GO=false", "CONTROLLER_GEN=false", "IMAGE=false").CombinedOutput()
	if err != nil {
		t.Fatalf("a bare make: %v\n%s", err, out)
	}
	for _, target := range targets {
		if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(target) + ` +\S`).Match(out) {
			t.Errorf("a bare make does not list %s:\n%s", target, out)
		}
	}
	dry, err := exec.Command(makeTool, "--no-print-directory", "-n").CombinedOutput()
	if err != nil || strings.Contains(string(dry), "controller-gen") || strings.Contains(string(dry), "go ") {
		t.Errorf("a bare make would run more than the help: %v\n%s", err, dry)
	}
}
