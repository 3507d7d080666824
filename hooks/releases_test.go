package hooks_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/mod/semver"

	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// releasesDir holds, per hook release (topology.TemplateRelease), the pod templates it renders
// for the reference cluster (examples/hook-requests/sync-new-cluster.json): a change to them
// restarts the pods of every cluster the hook runs.
const releasesDir = "testdata/releases"

// upgradesDoc is where each release whose templates differ from the release before says which
// pods it restarts and why.
const upgradesDoc = "../docs/upgrades.md"

// TestPodTemplatesPerRelease holds the reference cluster's pod templates of this release: a
// change to them fails until topology.TemplateRelease names a new release, its templates are
// written (go test ./hooks -run TestPodTemplatesPerRelease -update) and docs/upgrades.md has an
// entry for it ("### <release>" under "Upgrading the hook").
func TestPodTemplatesPerRelease(t *testing.T) {
	h := newHarness(t, 3, 2, withNow(goldenClock))
	got := templatesOf(t, postFile(t, h, "/sync", "sync-new-cluster.json"))
	path := filepath.Join(releasesDir, topology.TemplateRelease+".json")
	if *update {
		raw, err := json.MarshalIndent(got, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(raw, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := readTemplates(t, path)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the pod templates differ from release %s's (%s): every cluster's pods would restart. Name a new release "+
			"in topology.TemplateRelease, write its templates with -update and say in %s which pods it restarts and why (-%s +now):\n%s",
			topology.TemplateRelease, path, upgradesDoc, topology.TemplateRelease, diff)
	}
	releases := releaseFiles(t)
	if !slices.Contains(releases, topology.TemplateRelease) {
		t.Fatalf("no templates of release %s in %s", topology.TemplateRelease, releasesDir)
	}
	doc, err := os.ReadFile(upgradesDoc)
	if err != nil {
		t.Fatal(err)
	}
	for i, release := range releases {
		changed := i == 0 || !cmp.Equal(readTemplates(t, filepath.Join(releasesDir, releases[i-1]+".json")),
			readTemplates(t, filepath.Join(releasesDir, release+".json")))
		if changed && !strings.Contains(string(doc), "\n### "+release+"\n") {
			t.Errorf("release %s changes the pod templates and %s has no entry \"### %s\" saying which pods it restarts", release, upgradesDoc, release)
		}
	}
}

// templatesOf are the pod templates of the StatefulSets in a sync response, by StatefulSet name.
func templatesOf(t *testing.T, body []byte) map[string]any {
	t.Helper()
	var resp struct{ Children []map[string]any }
	if err := json.Unmarshal(body, &resp); err != nil {
		t.Fatalf("%v\n%s", err, body)
	}
	out := map[string]any{}
	for _, c := range resp.Children {
		if c["kind"] == "StatefulSet" {
			out[c["metadata"].(map[string]any)["name"].(string)] = c["spec"].(map[string]any)["template"]
		}
	}
	if len(out) != 2 {
		t.Fatalf("%d StatefulSets in the response; want the coordinators' and the data instances'", len(out))
	}
	return out
}

func readTemplates(t *testing.T, path string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./hooks -run TestPodTemplatesPerRelease -update)", err)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// releaseFiles are the releases with templates in releasesDir, oldest first.
func releaseFiles(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(releasesDir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !semver.IsValid(name) {
			t.Fatalf("%s: want <release>.json, such as v0.2.0.json", filepath.Join(releasesDir, e.Name()))
		}
		out = append(out, name)
	}
	slices.SortFunc(out, semver.Compare)
	return out
}
