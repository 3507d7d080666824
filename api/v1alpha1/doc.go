// Package v1alpha1 is the memgraph.com/v1alpha1 API: the MemgraphCluster, MemgraphBackup,
// MemgraphScheduledBackup and MemgraphUser types, with the controller-gen markers the CRDs are
// generated from, their status conditions, their defaults, and admission — the Go twins of the
// CRDs' OpenAPI and CEL rules, with the messages they refuse with. It is pure: no I/O, no clock,
// no randomness.
//
// A MemgraphCluster is admitted from a hook request's JSON by Admit (or AdmitWithholding), and a
// typed object by MemgraphCluster.Admit; topology derives what the cluster runs from the result.
//
// +groupName=memgraph.com
// +versionName=v1alpha1
// +kubebuilder:object:generate=true
package v1alpha1
