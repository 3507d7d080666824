// Package memgraphhooks is the root of memgraph-hooks, the Metacontroller hook that runs Memgraph
// high-availability clusters on Kubernetes. It holds no code: docs/architecture.md
// walks one POST /sync through the packages and says which package decides what, and
// layering_test.go enforces the rules that keep the core pure:
//
//   - topology (spec → identities and children) and planner (declared × observed → commands,
//     verdicts) do no I/O and read no clock;
//   - memgraph holds Memgraph's types, queries and errors and is free of any Bolt driver, so the
//     core can use them; memgraph/bolt is the only package that imports the neo4j driver;
//   - hooks, the HTTP shell, reads, calls the pure functions and acts.
package memgraphhooks
