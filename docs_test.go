package memgraphhooks_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// docFiles are the Markdown pages whose links must resolve: the README, every page of docs/ and
// the end-to-end suite's README.
func docFiles(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) == 0 {
		t.Fatal("docs/ holds no Markdown page")
	}
	return append([]string{"README.md", "e2e/README.md"}, pages...)
}

func readDoc(t *testing.T, name string) string {
	t.Helper()
	raw, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// withoutFences blanks every line of a fenced code block (``` or ~~~), keeping the line count,
// so that neither a heading nor a link is read inside one.
func withoutFences(text string) string {
	lines := strings.Split(text, "\n")
	fence := ""
	for i, line := range lines {
		trimmed := strings.TrimLeft(line, " ")
		switch {
		case fence == "" && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")):
			fence = trimmed[:3]
			lines[i] = ""
		case fence != "":
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			lines[i] = ""
		}
	}
	return strings.Join(lines, "\n")
}

var (
	codeSpan   = regexp.MustCompile("`[^`]*`")
	inlineLink = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)`)
	headingRE  = regexp.MustCompile(`(?m)^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	linkInText = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
)

// links returns the targets of a page's inline links, outside code blocks and code spans.
func links(text string) []string {
	text = codeSpan.ReplaceAllString(withoutFences(text), "")
	var out []string
	for _, m := range inlineLink.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	return out
}

// slug is GitHub's anchor for a heading: lower case, every character that is not a letter, a
// digit, a space, '-' or '_' dropped (backticks and other punctuation included), spaces to '-'.
func slug(heading string) string {
	heading = linkInText.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors returns every heading anchor of a page, a repeated heading's with GitHub's "-1", "-2"…
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, m := range headingRE.FindAllStringSubmatch(withoutFences(text), -1) {
		s := slug(m[2])
		if n := seen[s]; n > 0 {
			out[s+"-"+strconv.Itoa(n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

func TestSlugIsGitHubs(t *testing.T) {
	for heading, want := range map[string]string{
		"Bolt over TLS (`spec.tls`)":          "bolt-over-tls-spectls",
		"Day-2 operations":                    "day-2-operations",
		"50 clusters at once":                 "50-clusters-at-once",
		"Memgraph credentials (`spec.auth`)":  "memgraph-credentials-specauth",
		"What `make test` does, step_by_step": "what-make-test-does-step_by_step",
		"A [linked](x.md) heading":            "a-linked-heading",
	} {
		if got := slug(heading); got != want {
			t.Errorf("slug(%q) = %q, want %q", heading, got, want)
		}
	}
}

// Every relative link of the README, docs/ and e2e/README.md names a file or directory that
// exists and, with a fragment, a heading of that Markdown page.
func TestRelativeLinksResolve(t *testing.T) {
	pageAnchors := map[string]map[string]bool{}
	anchorsOf := func(name string) map[string]bool {
		if a, ok := pageAnchors[name]; ok {
			return a
		}
		a := anchors(readDoc(t, name))
		pageAnchors[name] = a
		return a
	}
	checked := 0
	for _, page := range docFiles(t) {
		for _, target := range links(readDoc(t, page)) {
			if target == "" || strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			checked++
			file, fragment, _ := strings.Cut(target, "#")
			dest := page
			if file != "" {
				dest = path.Clean(path.Join(path.Dir(page), file))
				if strings.HasPrefix(dest, "../") {
					t.Errorf("%s: link %q leaves the repository", page, target)
					continue
				}
				if _, err := os.Stat(filepath.FromSlash(dest)); err != nil {
					t.Errorf("%s: link %q: %s does not exist", page, target, dest)
					continue
				}
			}
			if fragment == "" {
				continue
			}
			if !strings.HasSuffix(dest, ".md") {
				t.Errorf("%s: link %q has an anchor into %s, which is not a Markdown page", page, target, dest)
				continue
			}
			if !anchorsOf(dest)[fragment] {
				t.Errorf("%s: link %q: %s has no heading with anchor #%s", page, target, dest, fragment)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no relative link found: the link parser is broken")
	}
	t.Logf("%d relative links resolve", checked)
}

// The README is a newcomer's page: short, with the two commands a newcomer runs first, exactly
// as they are.
func TestREADMEIsANewcomersPage(t *testing.T) {
	readme := readDoc(t, "README.md")
	if n := strings.Count(readme, "\n"); n > 350 {
		t.Errorf("README.md has %d lines; keep it to 350 and move detail into docs/", n)
	}
	for _, command := range []string{"go run ./cmd/memgraph-hooks --simulate", "make test"} {
		if !strings.Contains(readme, "\n"+command+" ") {
			t.Errorf("README.md does not start a line with the command %q", command)
		}
	}
}

var issueNumber = regexp.MustCompile(`(?i)\bissues?\s+#?\d+`)

// The README and docs/ state what is true and why; which issue brought something is history for
// git log.
func TestDocsNameNoIssueNumbers(t *testing.T) {
	for _, page := range docFiles(t) {
		if page == "e2e/README.md" {
			continue
		}
		for i, line := range strings.Split(readDoc(t, page), "\n") {
			if m := issueNumber.FindString(line); m != "" {
				t.Errorf("%s:%d: %q: state what is true, not which issue brought it", page, i+1, m)
			}
		}
	}
}

// conditionReasons are the values of every v1alpha1.ConditionReason constant declared in dir's
// Go files (tests excluded).
func conditionReasons(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			spec, ok := n.(*ast.ValueSpec)
			if !ok || !isConditionReason(spec.Type) {
				return true
			}
			for _, v := range spec.Values {
				if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					value, _ := strconv.Unquote(lit.Value)
					reasons = append(reasons, value)
				}
			}
			return true
		})
	}
	return reasons
}

func isConditionReason(typ ast.Expr) bool {
	switch t := typ.(type) {
	case *ast.Ident:
		return t.Name == "ConditionReason"
	case *ast.SelectorExpr:
		return t.Sel.Name == "ConditionReason"
	}
	return false
}

// docs/operations.md's Status section is where the README sends a reader for every condition
// reason: each reason the hook can report is named there.
func TestEveryConditionReasonIsDocumented(t *testing.T) {
	ops := readDoc(t, "docs/operations.md")
	start := strings.Index(ops, "\n## Status")
	if start < 0 {
		t.Fatal("docs/operations.md has no \"## Status\" section")
	}
	status := ops[start+1:]
	if end := strings.Index(status, "\n## "); end >= 0 {
		status = status[:end]
	}
	var reasons []string
	for _, dir := range []string{"api/v1alpha1", "topology", "planner"} {
		reasons = append(reasons, conditionReasons(t, dir)...)
	}
	if len(reasons) < 20 {
		t.Fatalf("found %d condition reasons in api/v1alpha1, topology and planner: the declaration scan is broken", len(reasons))
	}
	for _, r := range reasons {
		if !strings.Contains(status, "`"+r+"`") {
			t.Errorf("reason %s is not named in docs/operations.md's Status section", r)
		}
	}
}
