// Package memgraphhooks is the root of memgraph-hooks, the Metacontroller hook that runs Memgraph
// high-availability clusters on Kubernetes. It holds no code: docs/architecture.md
// walks one POST /sync through the packages and says which package decides what, and
// layering_test.go enforces the rules that keep the core pure:
//
//   - api/v1alpha1 (the API: types, defaults, admission), topology (spec → identities and
//     children) and planner (declared × observed → commands, verdicts) do no I/O and read no
//     clock; the API imports no other package of the project but the CRDs it admits against,
//     topology only the API;
//   - each package imports only the packages of the project its concern needs, and only cmd/
//     and e2e/ use client-go;
//   - memgraph holds Memgraph's types, queries and errors and is free of any Bolt driver, so the
//     core can use them; memgraph/bolt is the only package that imports the neo4j driver;
//   - hooks, the HTTP shell, reads, calls the pure functions and acts.
package memgraphhooks
