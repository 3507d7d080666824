package memgraph

import (
	"cmp"
	"slices"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
)

func TestImageVersion(t *testing.T) {
	type result struct {
		V  Version
		OK bool
	}
	known := func(major, minor, patch int, suffix string) result {
		return result{Version{major, minor, patch, suffix}, true}
	}
	unknown := result{}
	tests := []struct {
		image string
		want  result
	}{
		{"memgraph/memgraph:3.12.0", known(3, 12, 0, "")},
		{"memgraph:2.21.1", known(2, 21, 1, "")},
		{"docker.io/memgraph/memgraph:3.9.0", known(3, 9, 0, "")},
		{"host:5000/memgraph/memgraph:3.12.0", known(3, 12, 0, "")},
		{"localhost:5000/memgraph:10.0.20", known(10, 0, 20, "")},
		{"[::1]:5000/memgraph:3.12.1", known(3, 12, 1, "")},
		// Suffixes: a build flavour after '-', '_', '+' or '.'.
		{"memgraph/memgraph:3.12.0-relwithdebinfo", known(3, 12, 0, "-relwithdebinfo")},
		{"memgraph/memgraph:3.12.0_malloc", known(3, 12, 0, "_malloc")},
		{"memgraph/memgraph:3.12.0+build.5", known(3, 12, 0, "+build.5")},
		{"memgraph/memgraph:3.12.0.rc1", known(3, 12, 0, ".rc1")},
		{"memgraph/memgraph:3.12.0-1", known(3, 12, 0, "-1")},
		{"host:5000/memgraph/memgraph:3.8.1-relwithdebinfo", known(3, 8, 1, "-relwithdebinfo")},
		// No tag, or not one that names a release.
		{"memgraph/memgraph", unknown},
		{"host:5000/memgraph/memgraph", unknown},
		{"localhost:5000", unknown},
		{"memgraph/memgraph:", unknown},
		{":3.12.0", unknown},
		{"", unknown},
		{"memgraph/memgraph:latest", unknown},
		{"memgraph/memgraph:3.12", unknown},
		{"memgraph/memgraph:3", unknown},
		{"memgraph/memgraph:v3.12.0", unknown},
		{"memgraph/memgraph:my-build", unknown},
		{"memgraph/memgraph:3.12.0rc1", unknown},
		{"memgraph/memgraph:3.12.0-", unknown},
		{"memgraph/memgraph:3.12.0.1", unknown},
		{"memgraph/memgraph:3.12.x", unknown},
		{"memgraph/memgraph:3..0", unknown},
		{"memgraph/memgraph:03.12.0", unknown},
		{"memgraph/memgraph:3.012.0", unknown},
		{"memgraph/memgraph:3.12.00", unknown},
		{"memgraph/memgraph:-3.12.0", unknown},
		{"memgraph/memgraph:3.12.9999999999", unknown},
		// A digest decides what runs, whatever the tag says.
		{"memgraph/memgraph@sha256:" + sha, unknown},
		{"memgraph/memgraph:3.12.0@sha256:" + sha, unknown},
		{"host:5000/memgraph/memgraph:3.12.0@sha256:" + sha, unknown},
	}
	for _, tc := range tests {
		v, ok := ImageVersion(tc.image)
		if diff := gocmp.Diff(tc.want, result{v, ok}); diff != "" {
			t.Errorf("ImageVersion(%q) (-want +got)\n%s", tc.image, diff)
		}
	}
}

const sha = "9f2a7c1e0b3d4f5a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c"

// versionGrid is every combination of a few values of each component, each with and without a
// suffix: enough to meet every order of two versions in each component.
func versionGrid() []Version {
	var out []Version
	for _, major := range []int{0, 2, 3, 10} {
		for _, minor := range []int{0, 8, 9, 12} {
			for _, patch := range []int{0, 1, 10} {
				for _, suffix := range []string{"", "-relwithdebinfo"} {
					out = append(out, Version{major, minor, patch, suffix})
				}
			}
		}
	}
	return out
}

func tuple(v Version) [3]int { return [3]int{v.Major, v.Minor, v.Patch} }

func compareTuples(a, b [3]int) int {
	for i := range a {
		if c := cmp.Compare(a[i], b[i]); c != 0 {
			return c
		}
	}
	return 0
}

// Compare is a total order on the grid, the lexicographic order of (Major, Minor, Patch): it is
// antisymmetric and agrees with the tuples' order on every pair, and so is transitive.
func TestVersionCompareIsTheTupleOrder(t *testing.T) {
	grid := versionGrid()
	for _, a := range grid {
		for _, b := range grid {
			got := a.Compare(b)
			if want := compareTuples(tuple(a), tuple(b)); got != want {
				t.Fatalf("%v.Compare(%v) = %d, want %d", a, b, got, want)
			}
			if back := b.Compare(a); back != -got {
				t.Fatalf("%v.Compare(%v) = %d but %v.Compare(%v) = %d", a, b, got, b, a, back)
			}
		}
	}
	// Sorting by Compare sorts the tuples, whatever order the grid starts in.
	shuffled := slices.Clone(grid)
	slices.Reverse(shuffled)
	slices.SortStableFunc(shuffled, Version.Compare)
	if !slices.IsSortedFunc(shuffled, func(a, b Version) int { return compareTuples(tuple(a), tuple(b)) }) {
		t.Errorf("sorted by Compare: %v", shuffled)
	}
}

// String gives the tag back, so every grid version survives a trip through an image reference.
func TestVersionStringRoundTrips(t *testing.T) {
	for _, v := range versionGrid() {
		got, ok := ImageVersion("host:5000/memgraph/memgraph:" + v.String())
		if diff := gocmp.Diff(v, got); !ok || diff != "" {
			t.Errorf("%v read back as %v, %v (-want +got)\n%s", v, got, ok, diff)
		}
	}
	if got := (Version{3, 12, 0, "-relwithdebinfo"}).String(); got != "3.12.0-relwithdebinfo" {
		t.Errorf("String() = %q", got)
	}
}

func TestCrossesHAMigration(t *testing.T) {
	v := func(major, minor, patch int, suffix string) Version { return Version{major, minor, patch, suffix} }
	tests := []struct {
		a, b Version
		want bool
	}{
		{v(3, 8, 1, ""), v(3, 9, 0, ""), true},
		{v(3, 9, 0, ""), v(3, 8, 1, ""), true}, // either order
		{v(2, 21, 0, ""), v(3, 12, 0, ""), true},
		{v(3, 8, 99, ""), v(3, 9, 0, "-relwithdebinfo"), true},
		{v(3, 9, 0, ""), v(3, 12, 0, ""), false},
		{v(3, 9, 0, "-relwithdebinfo"), v(3, 9, 0, ""), false},
		{v(3, 12, 0, ""), v(3, 12, 1, ""), false},
		{v(3, 7, 0, ""), v(3, 8, 1, ""), false},
		{v(3, 8, 1, ""), v(3, 8, 1, ""), false},
		{v(2, 9, 0, ""), v(4, 0, 0, ""), true},
	}
	for _, tc := range tests {
		if got := CrossesHAMigration(tc.a, tc.b); got != tc.want {
			t.Errorf("CrossesHAMigration(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
	// On the grid: crossing is exactly "one below 3.9.0 and the other not".
	for _, a := range versionGrid() {
		for _, b := range versionGrid() {
			below := func(x Version) bool { return compareTuples(tuple(x), [3]int{3, 9, 0}) < 0 }
			if got := CrossesHAMigration(a, b); got != (below(a) != below(b)) {
				t.Fatalf("CrossesHAMigration(%v, %v) = %v", a, b, got)
			}
		}
	}
	if got := HAMigrationVersion().String(); got != "3.9.0" {
		t.Errorf("HAMigrationVersion() = %s", got)
	}
}
