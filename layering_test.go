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
	for _, pkg := range []string{"api/v1alpha1", "planner", "topology", "memgraph"} {
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

// The API, topology and planner are pure: no network, files, processes, clock, randomness or logging,
// and no package of the shell. They may use time.Time and time.Duration passed in; reading the
// clock is TestCoreReadsNoClock's. The planner's steps take the shell's context only to hand it
// to the shell's effects (Perform); only the shell's calls read its deadline.
func TestCoreDoesNoIO(t *testing.T) {
	forbidden := []string{"net", "net/http", "os", "os/exec", "math/rand", "math/rand/v2",
		"crypto/rand", "log", "log/slog", module + "/hooks", module + "/memgraph/bolt", module + "/memgraph/sim"}
	for _, line := range goList(t, "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./api/...", "./planner", "./topology") {
		pkg, imports, _ := strings.Cut(line, " ")
		for _, imp := range strings.Fields(imports) {
			if slices.Contains(forbidden, imp) && (imp != "context" || pkg != module+"/planner") {
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

// projectImports are the packages of the project each package below may import (tests aside):
// the API imports only the CRDs it admits against; topology only the API; the planner the API,
// topology and Memgraph's driver-free types; the shell's subpackages never the shell (hooks)
// itself, nor one another except where named. A package not listed here is unconstrained.
var projectImports = map[string][]string{
	"api/v1alpha1":           {"manifests"},
	"internal/apitest":       {"api/v1alpha1"},
	"topology":               {"api/v1alpha1"},
	"planner":                {"api/v1alpha1", "topology", "memgraph"},
	"memgraph":               {},
	"backup":                 {"api/v1alpha1", "topology", "memgraph", "internal/pki"},
	"hooks/wire":             {"api/v1alpha1"},
	"hooks/pending":          {},
	"hooks/serving":          {},
	"hooks/hookmetrics":      {"api/v1alpha1", "topology", "planner", "memgraph"},
	"hooks/clustersecrets":   {"hooks/wire", "topology", "memgraph"},
	"hooks/users":            {"api/v1alpha1", "topology", "planner", "memgraph", "hooks/wire", "hooks/clustersecrets", "hooks/pending"},
	"hooks/backupcontroller": {"api/v1alpha1", "topology", "planner", "memgraph", "backup", "hooks/wire", "hooks/clustersecrets"},
}

// Each package imports only the packages of the project its concern needs (projectImports).
func TestPackagesImportByConcern(t *testing.T) {
	for _, line := range goList(t, "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...") {
		pkg, imports, _ := strings.Cut(line, " ")
		allowed, listed := projectImports[strings.TrimPrefix(pkg, module+"/")]
		if !listed {
			continue
		}
		for _, imp := range strings.Fields(imports) {
			dep, ours := strings.CutPrefix(imp, module+"/")
			if ours && !slices.Contains(allowed, dep) {
				t.Errorf("%s imports %s: it may import only %v of the project", pkg, imp, allowed)
			}
		}
	}
}

// Only the command-line tools and the end-to-end suite talk to a Kubernetes API server: the core,
// the API and the hook see Kubernetes only as apimachinery's and k8s.io/api's types.
func TestOnlyCommandsUseClientGo(t *testing.T) {
	for _, line := range goList(t, "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...") {
		pkg, imports, _ := strings.Cut(line, " ")
		if strings.HasPrefix(pkg, module+"/cmd/") || strings.HasPrefix(pkg, module+"/e2e") {
			continue
		}
		for _, imp := range strings.Fields(imports) {
			if strings.HasPrefix(imp, "k8s.io/client-go") {
				t.Errorf("%s imports %s: only cmd/ and e2e/ may", pkg, imp)
			}
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
	for _, dir := range []string{"api/v1alpha1", "planner", "topology"} {
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
