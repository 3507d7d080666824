package memgraph

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseCoordinatorSettings(t *testing.T) {
	cols := []string{"setting_name", "setting_value"}
	got, err := ParseCoordinatorSettings(cols, [][]any{{"enabled_reads_on_main", "false"}, {"instance_down_timeout_sec", "5"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []Setting{{"enabled_reads_on_main", "false"}, {"instance_down_timeout_sec", "5"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for name, tc := range map[string]struct {
		cols []string
		rows [][]any
	}{
		"missing column":   {[]string{"setting_name"}, [][]any{{"x"}}},
		"value not string": {cols, [][]any{{"instance_down_timeout_sec", int64(5)}}},
		"empty name":       {cols, [][]any{{"", "5"}}},
	} {
		_, err := ParseCoordinatorSettings(tc.cols, tc.rows)
		var e *Error
		if !errors.As(err, &e) || e.Kind != KindProtocol {
			t.Errorf("%s: got %v, want a KindProtocol error", name, err)
		}
	}
}

func TestValidateInstanceRefusesUnknownMode(t *testing.T) {
	err := ValidateInstance("instance_1", InstanceConfig{"a:1", "b:2", "c:3", "EVENTUAL"})
	var e *Error
	if !errors.As(err, &e) || e.Kind != KindInvalidArgument {
		t.Errorf("got %v, want KindInvalidArgument", err)
	}
}
