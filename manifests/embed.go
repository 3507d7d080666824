// Package manifests embeds the generated MemgraphCluster CRD, so the hook validates a parent
// against the very schema the API server admits it with (topology.Admit).
package manifests

import _ "embed"

// CRD is crd/memgraph.com_memgraphclusters.yaml, as `make manifests` generates it.
//
//go:embed crd/memgraph.com_memgraphclusters.yaml
var CRD []byte
