package test

import (
	"bufio"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/prometheus/promql/parser"
	"sigs.k8s.io/yaml"

	"github.com/memgraph-hooks/memgraph-hooks/hooks"
)

const (
	rulesFile     = "../prometheusrule.yaml"
	dashboardFile = "../dashboards/memgraph-cluster.json"
	memgraphList  = "../memgraph-metrics.txt"
)

// clusterGauges are the hook's per-cluster gauges (labels namespace and name): every one is read
// by an alert or a panel. The hook's registry vouches that they exist.
var clusterGauges = []string{
	"memgraph_hooks_cluster_main_present",
	"memgraph_hooks_cluster_leader_present",
	"memgraph_hooks_cluster_members_up",
	"memgraph_hooks_cluster_members_declared",
	"memgraph_hooks_cluster_max_replica_lag",
	"memgraph_hooks_cluster_rollout_step",
	"memgraph_hooks_cluster_single_node_risk",
	"memgraph_hooks_cluster_memory_limit_bytes",
}

// backupSeries are the hook's backup metrics (labels namespace and cluster): every one is read
// by an alert or a panel.
var backupSeries = []string{
	"memgraph_hooks_backups_total",
	"memgraph_hooks_backup_last_success_timestamp_seconds",
	"memgraph_hooks_scheduled_backup_interval_seconds",
	"memgraph_hooks_scheduled_backup_created_timestamp_seconds",
}

// prometheusSeries are the series Prometheus itself writes for every target.
var prometheusSeries = []string{"up"}

type rule struct {
	Alert       string            `json:"alert"`
	Expr        string            `json:"expr"`
	For         string            `json:"for,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

type ruleGroup struct {
	Name  string `json:"name"`
	Rules []rule `json:"rules"`
}

type prometheusRule struct {
	Spec struct {
		Groups []ruleGroup `json:"groups"`
	} `json:"spec"`
}

// load reads a YAML or JSON file into into.
func load(t *testing.T, path string, into any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func loadRules(t *testing.T) prometheusRule {
	t.Helper()
	var pr prometheusRule
	load(t, rulesFile, &pr)
	if len(pr.Spec.Groups) == 0 {
		t.Fatalf("%s has no rule groups", rulesFile)
	}
	return pr
}

// query is one PromQL expression and where it comes from, for the error messages.
type query struct{ where, expr string }

func alertQueries(t *testing.T) []query {
	var qs []query
	for _, g := range loadRules(t).Spec.Groups {
		for _, r := range g.Rules {
			qs = append(qs, query{"alert " + r.Alert, r.Expr})
		}
	}
	return qs
}

type panel struct {
	Title   string  `json:"title"`
	Panels  []panel `json:"panels"`
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
}

type dashboard struct {
	Panels     []panel `json:"panels"`
	Templating struct {
		List []struct {
			Name       string `json:"name"`
			Type       string `json:"type"`
			Definition string `json:"definition"`
		} `json:"list"`
	} `json:"templating"`
}

// labelValuesRE is Grafana's label_values(<selector>, <label>) variable query.
var labelValuesRE = regexp.MustCompile(`^label_values\((.+),\s*[a-zA-Z_][a-zA-Z0-9_]*\)$`)

func dashboardQueries(t *testing.T) []query {
	t.Helper()
	var d dashboard
	load(t, dashboardFile, &d)
	var qs []query
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			for _, target := range p.Targets {
				qs = append(qs, query{"panel " + p.Title, target.Expr})
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	if len(qs) == 0 {
		t.Fatalf("%s has no panel with a query", dashboardFile)
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		m := labelValuesRE.FindStringSubmatch(v.Definition)
		if m == nil {
			t.Errorf("variable %s: %q is not label_values(<selector>, <label>)", v.Name, v.Definition)
			continue
		}
		qs = append(qs, query{"variable " + v.Name, m[1]})
	}
	return qs
}

// grafanaIntervalRE matches the interval variables Grafana substitutes before the query reaches
// Prometheus; dashboard variables ($namespace, $name) only appear inside label values.
var grafanaIntervalRE = regexp.MustCompile(`\$__(rate_interval|interval|range)\b`)

// metricNames parses expr with Prometheus's parser and returns the metric name of every
// selector; a selector without a name is an error (every query says which metric it reads).
func metricNames(expr string) ([]string, error) {
	expr = grafanaIntervalRE.ReplaceAllString(expr, "5m")
	node, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	if err != nil {
		return nil, err
	}
	var names []string
	var unnamed []string
	parser.Inspect(node, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			if vs.Name == "" {
				unnamed = append(unnamed, vs.String())
			} else {
				names = append(names, vs.Name)
			}
		}
		return nil
	})
	if len(unnamed) > 0 {
		return names, &unnamedError{unnamed}
	}
	return names, nil
}

type unnamedError struct{ selectors []string }

func (e *unnamedError) Error() string {
	return "selectors without a metric name: " + strings.Join(e.selectors, ", ")
}

// registryRecorder is a prometheus.Registerer that records the name of every metric registered
// with it, and whether it is a histogram (whose series are <name>_bucket, _sum and _count).
type registryRecorder struct {
	names      map[string]bool
	histograms map[string]bool
}

var fqNameRE = regexp.MustCompile(`fqName: "([^"]+)"`)

func (r *registryRecorder) Register(c prometheus.Collector) error {
	descs := make(chan *prometheus.Desc)
	go func() { c.Describe(descs); close(descs) }()
	_, histogram := c.(*prometheus.HistogramVec)
	if _, ok := c.(prometheus.Histogram); ok {
		histogram = true
	}
	for d := range descs {
		m := fqNameRE.FindStringSubmatch(d.String())
		if m == nil {
			continue
		}
		r.names[m[1]] = true
		r.histograms[m[1]] = r.histograms[m[1]] || histogram
	}
	return nil
}

func (r *registryRecorder) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		_ = r.Register(c)
	}
}

func (r *registryRecorder) Unregister(prometheus.Collector) bool { return false }

// hookSeries are the series names the hook's own registry can export: what hooks.NewHandler
// registers, with a histogram's three series.
func hookSeries(t *testing.T) map[string]bool {
	t.Helper()
	rec := &registryRecorder{names: map[string]bool{}, histograms: map[string]bool{}}
	hooks.NewHandler(hooks.Config{Registerer: rec})
	if len(rec.names) == 0 {
		t.Fatal("hooks.NewHandler registered no metric")
	}
	out := map[string]bool{}
	for name := range rec.names {
		addSeries(out, name, rec.histograms[name])
	}
	return out
}

func addSeries(out map[string]bool, name string, histogram bool) {
	if !histogram {
		out[name] = true
		return
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		out[name+suffix] = true
	}
}

// memgraphSeries reads memgraph-metrics.txt: "<name> <counter|gauge|histogram> <line>" lines.
func memgraphSeries(t *testing.T) map[string]bool {
	t.Helper()
	f, err := os.Open(memgraphList)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 3 || !strings.HasPrefix(fields[0], "memgraph_") ||
			!slices.Contains([]string{"counter", "gauge", "histogram"}, fields[1]) {
			t.Fatalf("%s: %q is not <memgraph_name> <counter|gauge|histogram> <line>", memgraphList, line)
		}
		addSeries(out, fields[0], fields[1] == "histogram")
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// Every alert and dashboard query parses, and every metric it reads exists: the hook's from its
// registry, Memgraph's from memgraph-metrics.txt.
func TestQueriesParseAndNameExistingMetrics(t *testing.T) {
	known := hookSeries(t)
	for name := range memgraphSeries(t) {
		known[name] = true
	}
	for _, name := range prometheusSeries {
		known[name] = true
	}
	queries := append(alertQueries(t), dashboardQueries(t)...)
	if len(queries) < 10 {
		t.Fatalf("only %d queries found", len(queries))
	}
	used := map[string]bool{}
	for _, q := range queries {
		names, err := metricNames(q.expr)
		if err != nil {
			t.Errorf("%s: %q: %v", q.where, q.expr, err)
			continue
		}
		if len(names) == 0 {
			t.Errorf("%s: %q reads no metric", q.where, q.expr)
		}
		for _, name := range names {
			used[name] = true
			if !known[name] {
				t.Errorf("%s: %q reads %s, which neither the hook nor Memgraph 3.12 exports", q.where, q.expr, name)
			}
		}
	}
	for _, name := range append(clusterGauges, backupSeries...) {
		if !used[name] {
			t.Errorf("no alert or panel reads %s", name)
		}
	}
}

// The checker itself: a misspelt metric, a Grafana variable outside a label value and a
// selector without a name are all caught.
func TestMetricNamesRefusesWhatPrometheusWouldNotRun(t *testing.T) {
	names, err := metricNames(`sum by (le) (rate(memgraph_hooks_sync_duration_seconds_bucket{job="memgraph-hooks", namespace="$namespace"}[$__rate_interval]))`)
	if err != nil || !slices.Equal(names, []string{"memgraph_hooks_sync_duration_seconds_bucket"}) {
		t.Errorf("names %v, error %v", names, err)
	}
	for _, bad := range []string{`max(memgraph_instance_up{`, `rate(memgraph_hooks_requests_total[$interval])`, `{job="memgraph"} == 0`} {
		if _, err := metricNames(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	known := hookSeries(t)
	for _, name := range []string{"memgraph_hooks_requests_total", "memgraph_hooks_sync_duration_seconds_bucket", "memgraph_hooks_commands_total"} {
		if !known[name] {
			t.Errorf("the hook's registry lacks %s", name)
		}
	}
	if known["memgraph_hooks_sync_duration_seconds"] || known["memgraph_hooks_requests_total_bucket"] {
		t.Error("a histogram's family name or a counter's _bucket counted as a series")
	}
	mg := memgraphSeries(t)
	if !mg["memgraph_instance_up"] || !mg["memgraph_data_failover_seconds_bucket"] || mg["memgraph_instance_up_total"] {
		t.Error("memgraph-metrics.txt read wrongly")
	}
}

// Every alert has a severity, a summary and a description, and a unique name.
func TestAlertsAreDescribed(t *testing.T) {
	seen := map[string]bool{}
	for _, g := range loadRules(t).Spec.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				t.Errorf("group %s: a rule without an alert name (recording rules belong elsewhere)", g.Name)
			}
			if seen[r.Alert] {
				t.Errorf("alert %s defined twice", r.Alert)
			}
			seen[r.Alert] = true
			if !slices.Contains([]string{"critical", "warning"}, r.Labels["severity"]) {
				t.Errorf("alert %s: severity %q", r.Alert, r.Labels["severity"])
			}
			if r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
				t.Errorf("alert %s: summary and description are required", r.Alert)
			}
		}
	}
}
