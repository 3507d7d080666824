// Package topology turns an admitted MemgraphCluster (the API is api/v1alpha1) into what
// Kubernetes and Memgraph should run: the declared identity of every member, and the desired
// child objects the sync hook returns. It is pure: no I/O, no clock, no randomness.
//
// A cluster is admitted once — Admit for a hook request's JSON, NewCluster for a typed object —
// into a Cluster, defaulted and valid; Network, Declare and Render work from that.
package topology
