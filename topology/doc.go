// Package topology turns a MemgraphCluster into what Kubernetes and Memgraph should run: the API
// types (with the controller-gen markers the CRD is generated from) and the status conditions,
// their defaults and validation, the declared identity of every member, and the desired child
// objects the sync hook returns. It is pure: no I/O, no clock, no randomness.
//
// A cluster is admitted once — Admit for a hook request's JSON, NewCluster for a typed object —
// into a Cluster, defaulted and valid; Network, Declare and Render work from that.
//
// +groupName=memgraph.com
// +versionName=v1alpha1
// +kubebuilder:object:generate=true
package topology
