package metacontroller

import "testing"

// The driver builds hook URLs and picks endpointConfigs entries as Metacontroller v4.17 does.
func TestEndpointResolutionFollowsMetacontroller(t *testing.T) {
	cc, err := ParseCompositeController([]byte(`
kind: CompositeController
metadata: {name: c}
spec:
  parentResource: {apiVersion: memgraph.com/v1alpha1, resource: memgraphclusters}
  endpointConfigs:
  - host: other.ns:443
    authorization: {secretRef: {name: wrong, namespace: ns, key: token}}
  - host: hook.ns:443
    caBundle: {secretRef: {name: tls, namespace: ns}}
    authorization: {secretRef: {name: tok, namespace: ns, key: token}}
  hooks:
    sync: {webhook: {service: {name: hook, namespace: ns, port: 443, protocol: https}, path: /sync}}
    customize:
      webhook:
        service: {name: hook, namespace: ns, port: 443, protocol: https}
        path: /customize
        authorization: {secretRef: {name: own, namespace: ns, key: t}}
`))
	if err != nil {
		t.Fatal(err)
	}
	if cc.Sync.URL != "https://hook.ns:443/sync" {
		t.Errorf("sync URL %s", cc.Sync.URL)
	}
	if !cc.Sync.Endpoint.empty() {
		t.Errorf("the sync hook sets no connection fields, got %+v", cc.Sync.Endpoint)
	}
	if m := matchEndpointConfig(cc.Sync.URL, cc.EndpointConfigs); m == nil || m.Authorization.SecretRef.Name != "tok" || m.CABundle.SecretRef.Name != "tls" {
		t.Errorf("sync hook matched %+v, want the hook.ns:443 entry", m)
	}
	if cc.Customize.Endpoint.empty() || cc.Customize.Endpoint.Authorization.SecretRef.Name != "own" {
		t.Errorf("the customize hook's own authorization is lost: %+v", cc.Customize.Endpoint)
	}
	for _, tc := range []struct {
		url, host string
		match     bool
	}{
		{"https://hook.ns:443/sync", "hook.ns:443", true},
		{"https://hook.ns:443/sync", "HOOK.ns", true},
		{"https://hook.ns/sync", "hook.ns:443", true},
		{"http://hook.ns:80/sync", "hook.ns", true},
		{"https://hook.ns:8443/sync", "hook.ns", false},
		{"https://hook.ns:443/sync", "hook.ns:80", false},
	} {
		got := matchEndpointConfig(tc.url, []EndpointConfig{{Host: tc.host}}) != nil
		if got != tc.match {
			t.Errorf("%s against host %s: match %v, want %v", tc.url, tc.host, got, tc.match)
		}
	}
}
