package wire

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
)

// Query parameters. POST /sync takes dryRun; POST /customize takes none. Anything else —
// including dryRun in another case, such as ?dryrun=true, and a query string that does not parse
// — is refused with a 400: a request must never execute because a parameter meant to stop it
// was not recognised.
const paramDryRun = "dryRun"

// ParseQuery parses raw strictly and refuses any parameter not in known.
func ParseQuery(raw string, known ...string) (url.Values, error) {
	q, err := url.ParseQuery(raw)
	if err != nil {
		return nil, Badf("malformed query string: %s", v1alpha1.Clip(err.Error()))
	}
	for _, name := range slices.Sorted(maps.Keys(q)) {
		if slices.Contains(known, name) {
			continue
		}
		hint, accepted := "", "no query parameters"
		if len(known) > 0 {
			accepted = "only " + strings.Join(known, ", ")
		}
		for _, k := range known {
			if strings.EqualFold(k, name) {
				hint = fmt.Sprintf(" (parameter names are case-sensitive: did you mean %s?)", k)
			}
		}
		return nil, Badf("unknown query parameter %q%s: this endpoint accepts %s", v1alpha1.Clip(name), hint, accepted)
	}
	return q, nil
}

// DryRun reads POST /sync's query: dryRun is a dry run for every value strconv.ParseBool
// takes as true (1, t, T, TRUE, true, True), an execution for one it takes as false, and a 400
// otherwise (an empty value included, and dryRun given twice).
func DryRun(raw string) (bool, error) {
	q, err := ParseQuery(raw, paramDryRun)
	if err != nil {
		return false, err
	}
	values, present := q[paramDryRun]
	switch {
	case !present:
		return false, nil
	case len(values) != 1:
		return false, Badf("dryRun is given %d times: give it once", len(values))
	}
	dry, err := strconv.ParseBool(values[0])
	if err != nil {
		return false, Badf("dryRun=%q is not a boolean: dryRun=true (or 1, t, T, TRUE, True) plans without executing, dryRun=false executes",
			v1alpha1.Clip(values[0]))
	}
	return dry, nil
}
