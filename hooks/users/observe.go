package users

import (
	"encoding/json"
	"fmt"

	"github.com/memgraph-hooks/memgraph-hooks/api/v1alpha1"
	"github.com/memgraph-hooks/memgraph-hooks/hooks/wire"
	"github.com/memgraph-hooks/memgraph-hooks/topology"
)

// decodeUser decodes the parent MemgraphUser; a spec admission would refuse is not a bad request
// but a condition (the planner's gate on the spec), so that nothing is sent for it and the user sees why.
func decodeUser(raw json.RawMessage) (*v1alpha1.MemgraphUser, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, wire.Badf("request has no parent: expected a MemgraphUser")
	}
	var u v1alpha1.MemgraphUser
	if err := wire.DecodeAt(raw, "parent", &u); err != nil {
		return nil, err
	}
	if u.Name == "" {
		return nil, wire.Badf("parent has no metadata.name")
	}
	return &u, nil
}

// secret is what the hook reads of a Secret: its version, annotations and data.
type secret struct {
	Metadata struct {
		Name            string            `json:"name"`
		Namespace       string            `json:"namespace"`
		ResourceVersion string            `json:"resourceVersion"`
		Annotations     map[string]string `json:"annotations"`
	} `json:"metadata"`
	Data map[string]string `json:"data"`
}

// observation is what a MemgraphUser's request says of its world.
type observation struct {
	cluster   *topology.Cluster
	clusterNG string  // why the cluster's spec cannot be used, when it exists but is refused
	access    *secret // the cluster's user-access Secret, nil when absent
	password  *secret // spec.passwordSecret's, nil when absent (or not named)
	generated *secret // the generated Secret among the children, nil when absent
}

// observe reads the related cluster and Secrets (the cluster's user-access Secret and
// spec.passwordSecret's; any other is not read) and the generated Secret child of u's request.
func observe(u *v1alpha1.MemgraphUser, req *wire.CompositeRequest) (observation, error) {
	var obs observation
	for _, key := range wire.SortedKeys(req.Related[wire.ClusterKind]) {
		raw := req.Related[wire.ClusterKind][key]
		var meta struct {
			Metadata wire.ObjectMeta `json:"metadata"`
		}
		if err := wire.DecodeAt(raw, wire.EntryPath("related", wire.ClusterKind, key), &meta); err != nil {
			return obs, err
		}
		if meta.Metadata.Name != u.Spec.Cluster || !meta.Metadata.In(u.Namespace) || meta.Metadata.DeletionTimestamp != "" {
			continue
		}
		c, err := topology.AdmitWithholding(raw) // a withheld coordinator setting is no concern of a user
		if err != nil {
			obs.clusterNG = fmt.Sprintf("MemgraphCluster %s has a spec the hook refuses: %v", wire.ObjectKey(u.Namespace, u.Spec.Cluster), err)
			continue
		}
		obs.cluster = c
	}
	group := req.Related[wire.SecretKey]
	for _, key := range wire.SortedKeys(group) {
		path := wire.EntryPath("related", wire.SecretKey, key)
		var s *secret
		if err := wire.DecodeAt(group[key], path, &s); err != nil {
			return obs, err
		}
		if s == nil || (s.Metadata.Namespace != "" && s.Metadata.Namespace != u.Namespace) {
			continue
		}
		if s.Metadata.Name == topology.UserAccessSecretName(u.Spec.Cluster) {
			obs.access = s
		}
		if u.Spec.PasswordSecret != nil && s.Metadata.Name == u.Spec.PasswordSecret.Name {
			obs.password = s
		}
	}
	children := req.Children[wire.SecretKey]
	for _, key := range wire.SortedKeys(children) {
		var s *secret
		if err := wire.DecodeAt(children[key], wire.EntryPath("children", wire.SecretKey, key), &s); err != nil {
			return obs, err
		}
		if s != nil && s.Metadata.Name == v1alpha1.UserSecretName(u.Name) && (s.Metadata.Namespace == "" || s.Metadata.Namespace == u.Namespace) {
			obs.generated = s
		}
	}
	return obs, nil
}
