package memgraphhooks_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
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
// and no package of the shell. They may use time.Time and time.Duration passed in; reading the
// clock is TestCoreReadsNoClock's.
func TestCoreDoesNoIO(t *testing.T) {
	forbidden := []string{"context", "net", "net/http", "os", "os/exec", "math/rand", "math/rand/v2",
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

// clockReads are the functions that read the clock or wait on it, by the package that has them.
var clockReads = map[string][]string{
	"time":                                 {"Now", "Since", "Until", "After", "AfterFunc", "Tick", "NewTimer", "NewTicker", "Sleep"},
	"k8s.io/apimachinery/pkg/apis/meta/v1": {"Now", "NowMicro"},
}

// The core never reads the clock: the shell passes the time in.
func TestCoreReadsNoClock(t *testing.T) {
	for _, dir := range []string{"planner", "topology"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			for _, read := range readsOfTheClock(t, file, nil) {
				t.Errorf("%s: %s reads the clock: the core takes the time it needs from the shell", file, read)
			}
		}
	}
	// The check finds what it looks for, however the package is named.
	const src = `package p
import ("time"; clock "time"; metav1 "k8s.io/apimachinery/pkg/apis/meta/v1")
var d time.Duration
func f(at time.Time) { _ = time.Now(); _ = clock.Since(at); _ = metav1.Now(); _ = metav1.NewTime(at) }`
	if got, want := readsOfTheClock(t, "sample.go", src), []string{"time.Now", "clock.Since", "metav1.Now"}; !slices.Equal(got, want) {
		t.Errorf("clock reads in the sample: %v, want %v", got, want)
	}
}

// readsOfTheClock lists the clock reads in a Go file (src, or the file's content when src is nil).
func readsOfTheClock(t *testing.T, file string, src any) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{} // the name an import is used by → its path
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		name := filepath.Base(path)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		names[name] = path
	}
	var reads []string
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if pkg, ok := sel.X.(*ast.Ident); ok && slices.Contains(clockReads[names[pkg.Name]], sel.Sel.Name) {
			reads = append(reads, pkg.Name+"."+sel.Sel.Name)
		}
		return true
	})
	return reads
}
