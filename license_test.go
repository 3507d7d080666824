package memgraphhooks_test

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
	"testing"
)

// apache20 is the SHA-256 of the Apache License 2.0 as the Apache Software Foundation publishes
// it (https://www.apache.org/licenses/LICENSE-2.0.txt), the file Metacontroller and Kubernetes
// ship too.
const apache20 = "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"

// LICENSE is the Apache License 2.0, word for word: licence detection (GitHub's, pkg.go.dev's)
// recognises only the exact text.
func TestLicenseIsApache20(t *testing.T) {
	sum := sha256.Sum256([]byte(readDoc(t, "LICENSE")))
	if got := hex.EncodeToString(sum[:]); got != apache20 {
		t.Errorf("LICENSE's SHA-256 is %s, not the Apache License 2.0's %s", got, apache20)
	}
}

var changelogRelease = regexp.MustCompile(`(?m)^## \[([^\]]+)\]`)

// CHANGELOG.md lists Unreleased first, then each release newest first, each heading a version
// with a link.
func TestChangelogReleasesHaveLinks(t *testing.T) {
	changelog := readDoc(t, "CHANGELOG.md")
	releases := changelogRelease.FindAllStringSubmatch(changelog, -1)
	if len(releases) < 2 || releases[0][1] != "Unreleased" {
		t.Fatalf("CHANGELOG.md's release headings %v: want [Unreleased] first, then at least one release", releases)
	}
	for _, r := range releases {
		if r[1] != "Unreleased" && !regexp.MustCompile(`^\d+\.\d+\.\d+$`).MatchString(r[1]) {
			t.Errorf("release heading %q is not a semantic version", r[1])
		}
		if !strings.Contains(changelog, "\n["+r[1]+"]: https://") {
			t.Errorf("release %s has no link reference", r[1])
		}
	}
}
