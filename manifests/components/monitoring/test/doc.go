// Package test checks the monitoring component (manifests/components/monitoring): every alert
// and dashboard query parses with Prometheus's own PromQL parser and names only metrics that
// exist, the hook's from its registry and Memgraph's from memgraph-metrics.txt; every alert has a
// promtool rule unit test, and those tests pass (make monitoring). It is a module of its own so
// that the Prometheus server's dependencies stay out of the hook's go.mod.
package test
