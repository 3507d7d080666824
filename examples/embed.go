// Package examples embeds the example manifests, so tests and the hook's --simulate mode use the
// very files the README tells users to apply.
package examples

import _ "embed"

// MinimalCluster is minimal-cluster.yaml: the MemgraphCluster of the quickstart.
//
//go:embed minimal-cluster.yaml
var MinimalCluster []byte
