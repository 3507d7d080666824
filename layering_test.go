package memgraphhooks_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/memgraph-hooks/memgraph-hooks"

// goList runs go list with a template over packages and returns one line per package.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH: cannot list the packages' imports")
	}
	out, err := exec.Command(goTool, append([]string{"list"}, args...)...).Output()
	if err != nil {
		t.Fatalf("go list %v: %v", args, err)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

// The pure core and Memgraph's types never pull in the Bolt driver, not even indirectly.
func TestCoreIsDriverFree(t *testing.T) {
	for _, pkg := range []string{"planner", "topology", "memgraph"} {
		for _, dep := range goList(t, "-deps", "./"+pkg) {
			if strings.HasPrefix(dep, "github.com/neo4j/") {
				t.Errorf("%s depends on %s: only memgraph/bolt may import the Bolt driver", pkg, dep)
				break
			}
		}
	}
}

// memgraph/bolt is the only package whose code imports the driver (tests of the simulator may
// use it as a client).
func TestOnlyBoltImportsTheDriver(t *testing.T) {
	for _, line := range goList(t, "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...") {
		pkg, imports, _ := strings.Cut(line, " ")
		if pkg == module+"/memgraph/bolt" {
			continue
		}
		for _, imp := range strings.Fields(imports) {
			if strings.HasPrefix(imp, "github.com/neo4j/") {
				t.Errorf("%s imports %s: only memgraph/bolt may", pkg, imp)
			}
		}
	}
}

// topology and planner are pure: no network, files, processes, clock, randomness or logging,
// and no package of the shell.
func TestCoreDoesNoIO(t *testing.T) {
	forbidden := []string{"context", "net", "net/http", "os", "os/exec", "time", "math/rand", "math/rand/v2",
		"crypto/rand", "log", "log/slog", module + "/hooks", module + "/memgraph/bolt", module + "/memgraph/sim"}
	for _, line := range goList(t, "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./planner", "./topology") {
		pkg, imports, _ := strings.Cut(line, " ")
		for _, imp := range strings.Fields(imports) {
			if slices.Contains(forbidden, imp) {
				t.Errorf("%s imports %s: the core stays pure (the hook does the I/O)", pkg, imp)
			}
		}
	}
	for _, line := range goList(t, "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./topology") {
		if strings.Contains(line, module+"/planner") || strings.Contains(line, module+"/memgraph") {
			t.Errorf("topology depends on the planner or memgraph: %s", line)
		}
	}
}
