package memgraph

import (
	"cmp"
	"strconv"
	"strings"
)

// Version is a Memgraph release as an image tag names it: Major.Minor.Patch and an optional
// Suffix (a build flavour such as "-relwithdebinfo"), kept with its separator so that String
// gives the tag back.
type Version struct {
	Major, Minor, Patch int
	Suffix              string
}

// Compare orders versions by (Major, Minor, Patch) and returns -1, 0 or +1. The suffix is
// ignored: 3.12.0-relwithdebinfo is the release 3.12.0 built another way, not another release.
func (v Version) Compare(w Version) int {
	if c := cmp.Compare(v.Major, w.Major); c != 0 {
		return c
	}
	if c := cmp.Compare(v.Minor, w.Minor); c != 0 {
		return c
	}
	return cmp.Compare(v.Patch, w.Patch)
}

func (v Version) String() string {
	return strconv.Itoa(v.Major) + "." + strconv.Itoa(v.Minor) + "." + strconv.Itoa(v.Patch) + v.Suffix
}

// maxComponentDigits bounds a version component so it fits an int on every platform.
const maxComponentDigits = 9

// ImageVersion reads the Memgraph version from an image reference "repository:tag", where the
// repository may start with a registry that has a port (host:5000/memgraph/memgraph:3.12.0).
// The tag must be X.Y.Z (decimal, no leading zeros) optionally followed by a suffix that starts
// with '-', '_', '+' or '.' and has at least one more character; a '.' followed by a digit is a
// fourth component, not a suffix. Anything else is unknown (false): no tag, "latest", "3.12",
// "v3.12.0", a custom tag, and any reference with a digest (@sha256:…), since the digest, not
// the tag, decides what runs.
func ImageVersion(image string) (Version, bool) {
	if strings.Contains(image, "@") {
		return Version{}, false
	}
	slash := strings.LastIndex(image, "/")
	colon := strings.LastIndex(image, ":")
	if colon <= slash+1 { // no tag after the last path component (or an empty name)
		return Version{}, false
	}
	return parseVersionTag(image[colon+1:])
}

// parseVersionTag reads X.Y.Z[suffix] as documented on ImageVersion.
func parseVersionTag(tag string) (Version, bool) {
	var v Version
	var ok bool
	rest := tag
	for i, field := range []*int{&v.Major, &v.Minor, &v.Patch} {
		if i > 0 {
			if rest, ok = strings.CutPrefix(rest, "."); !ok {
				return Version{}, false
			}
		}
		if *field, rest, ok = leadingNumber(rest); !ok {
			return Version{}, false
		}
	}
	if rest != "" && !isSuffix(rest) {
		return Version{}, false
	}
	v.Suffix = rest
	return v, true
}

// leadingNumber reads the decimal number at the start of s: at least one digit, no leading
// zero unless it is 0, at most maxComponentDigits digits.
func leadingNumber(s string) (n int, rest string, ok bool) {
	end := 0
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	if end == 0 || end > maxComponentDigits || (s[0] == '0' && end > 1) {
		return 0, s, false
	}
	n, err := strconv.Atoi(s[:end])
	return n, s[end:], err == nil
}

func isSuffix(s string) bool {
	if len(s) < 2 || !strings.ContainsRune("-_+.", rune(s[0])) {
		return false
	}
	return s[0] != '.' || s[1] < '0' || s[1] > '9'
}

// haMigration is the first release whose coordinators use the 3.9 HA state: moving a cluster
// between a release before it and one from it on requires wiping every coordinator's data
// (Memgraph docs page "migrating-to-v3-9-ha"; Memgraph v3.12.0 tests/issu/test_upgrade.sh,
// HA_39_MIGRATION_CUTOFF_VERSION ~138 and the coordinator reset flow ~887–926).
var haMigration = Version{Major: 3, Minor: 9, Patch: 0}

// HAMigrationVersion is 3.9.0, the release CrossesHAMigration measures against.
func HAMigrationVersion() Version { return haMigration }

// CrossesHAMigration reports whether a and b lie on opposite sides of 3.9.0, in either order.
// An upgrade across it needs the coordinators' data wiped; Memgraph documents only that
// direction, and a downgrade across it leaves the older release state it does not know.
// Suffixes are ignored, as by Compare.
func CrossesHAMigration(a, b Version) bool {
	return (a.Compare(haMigration) < 0) != (b.Compare(haMigration) < 0)
}
