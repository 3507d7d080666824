// Package examples embeds the example manifests, so tests and the hook's --simulate mode use the
// very files the README tells users to apply.
package examples

import (
	_ "embed"
	"encoding/json"
	"fmt"

	"sigs.k8s.io/yaml"
)

// MinimalCluster is minimal-cluster.yaml: the MemgraphCluster of the quickstart. It names no
// namespace; kubectl apply puts it in the current one.
//
//go:embed minimal-cluster.yaml
var MinimalCluster []byte

// Backups is backups.yaml: the quickstart cluster with spec.backup.destination, a
// MemgraphScheduledBackup of it and a MemgraphBackup.
//
//go:embed backups.yaml
var Backups []byte

// MinimalClusterIn is MinimalCluster as JSON, placed in namespace as `kubectl apply -n namespace`
// would place it.
func MinimalClusterIn(namespace string) ([]byte, error) {
	var obj map[string]any
	if err := yaml.Unmarshal(MinimalCluster, &obj); err != nil {
		return nil, fmt.Errorf("minimal-cluster.yaml: %w", err)
	}
	meta, ok := obj["metadata"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("minimal-cluster.yaml has no metadata")
	}
	meta["namespace"] = namespace
	return json.Marshal(obj)
}
