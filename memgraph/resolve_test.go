package memgraph

import (
	"flag"
	"io"
	"testing"
)

func TestParseResolveFlag(t *testing.T) {
	tests := []struct {
		in       string
		from, to string
		ok       bool
	}{
		{"memgraph-coordinator-1.db.svc.cluster.local:7687=127.0.0.1:17687", "memgraph-coordinator-1.db.svc.cluster.local:7687", "127.0.0.1:17687", true},
		{" c1:7687=[::1]:17687 ", "c1:7687", "[::1]:17687", true},
		{"c1:7687", "", "", false},
		{"c1=127.0.0.1:1", "", "", false},
		{"c1:7687=127.0.0.1", "", "", false},
		{"=127.0.0.1:1", "", "", false},
		{"c1:7687=", "", "", false},
		{":7687=h:1", "", "", false},
	}
	for _, tc := range tests {
		from, to, err := ParseResolveFlag(tc.in)
		if (err == nil) != tc.ok || from != tc.from || to != tc.to {
			t.Errorf("ParseResolveFlag(%q) = %q, %q, %v", tc.in, from, to, err)
		}
	}
}

func TestStaticResolverAsFlag(t *testing.T) {
	r := StaticResolver{}
	fs := flag.NewFlagSet("hook", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Var(r, "resolve", "advertised=dial")
	err := fs.Parse([]string{"--resolve", "c2:7687=127.0.0.1:2", "--resolve", "c1:7687=127.0.0.1:1", "--resolve", "c1:7687=127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Resolve("c1:7687"); got != "127.0.0.1:1" {
		t.Errorf("c1 -> %s", got)
	}
	if got := r.Resolve("c3:7687"); got != "c3:7687" {
		t.Errorf("unknown addresses must pass through, got %s", got)
	}
	if got := r.String(); got != "c1:7687=127.0.0.1:1,c2:7687=127.0.0.1:2" {
		t.Errorf("String() = %s", got)
	}
	if err := r.Set("c1:7687=127.0.0.1:9"); err == nil {
		t.Error("a conflicting second mapping must be refused")
	}
	if err := fs.Parse([]string{"--resolve", "nonsense"}); err == nil {
		t.Error("malformed flag accepted")
	}
}
