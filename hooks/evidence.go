package hooks

import (
	"fmt"
	"math"
	"sort"
	"strconv"

	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// Readers of the fields the hook needs from the children and related objects. One rule: a value
// of the wrong type, or a number outside its Kubernetes type's range, is a bad request naming the
// value's JSON path; an absent (or null) field is absent. Numbers arrive as int64 when they are
// JSON integers and float64 otherwise (decodeJSON), so 2.5 and 1e300 are refused, never rounded.

// objectAt returns obj[key] as an object, nil when absent.
func objectAt(obj object, key, path string) (object, error) {
	switch v := obj[key].(type) {
	case nil:
		return nil, nil
	case map[string]any:
		return v, nil
	default:
		return nil, wrongType(path+"."+key, "an object", v)
	}
}

// listAt returns obj[key] as a list, nil when absent.
func listAt(obj object, key, path string) ([]any, error) {
	switch v := obj[key].(type) {
	case nil:
		return nil, nil
	case []any:
		return v, nil
	default:
		return nil, wrongType(path+"."+key, "a list", v)
	}
}

// stringAt returns obj[key] as a string, "" when absent.
func stringAt(obj object, key, path string) (string, error) {
	switch v := obj[key].(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	default:
		return "", wrongType(path+"."+key, "a string", v)
	}
}

// intAt returns obj[key] as an integer in [0, limit] and whether it is present.
func intAt(obj object, key, path string, limit int64) (int64, bool, error) {
	switch v := obj[key].(type) {
	case nil:
		return 0, false, nil
	case int64:
		if v < 0 || v > limit {
			return 0, false, badRequestf("%s must be an integer between 0 and %d, got %d", path+"."+key, limit, v)
		}
		return v, true, nil
	default:
		return 0, false, wrongType(path+"."+key, fmt.Sprintf("an integer between 0 and %d", limit), v)
	}
}

func int32At(obj object, key, path string) (int32, bool, error) {
	n, ok, err := intAt(obj, key, path, math.MaxInt32)
	return int32(n), ok, err
}

func wrongType(path, want string, got any) error {
	return badRequestf("%s must be %s, got %s", path, want, describeValue(got))
}

// describeValue names a decoded JSON value briefly: numbers and strings (bounded) by value,
// anything else by its kind.
func describeValue(v any) string {
	switch x := v.(type) {
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case string:
		return "the string " + strconv.Quote(topology.Clip(x))
	}
	return topology.JSONKind(v)
}

// warnings collects the evidence a sync ignored, for status.warnings: sorted, and at most
// topology.MaxWarnings of them, the last counting the rest, so the same request always renders
// the same status.
type warnings []string

func (w *warnings) addf(format string, args ...any) { *w = append(*w, fmt.Sprintf(format, args...)) }

func (w warnings) render() []string {
	if len(w) == 0 {
		return nil
	}
	out := append([]string{}, w...)
	sort.Strings(out)
	if len(out) > topology.MaxWarnings {
		rest := len(out) - (topology.MaxWarnings - 1)
		out = append(out[:topology.MaxWarnings-1], fmt.Sprintf("and %d more ignored objects", rest))
	}
	return out
}

// role names a role's ceiling in warnings.
type role struct {
	set     string // the StatefulSet's name
	first   int    // its first ordinal
	ceiling int32  // the most members a MemgraphCluster may declare
	noun    string
}

func roles(cluster string) []role {
	return []role{
		{topology.CoordinatorSetName(cluster), topology.FirstCoordinatorID, topology.MaxCoordinators, "coordinators"},
		{topology.DataSetName(cluster), topology.FirstDataOrdinal, topology.MaxDataInstances, "data instances"},
	}
}

// beyond says why a size is ignored.
func (r role) beyond() string {
	return fmt.Sprintf("beyond the %d %s a MemgraphCluster may have: ignored", r.ceiling, r.noun)
}
