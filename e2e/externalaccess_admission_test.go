//go:build e2e

package e2e_test

// The admission cases of spec.externalAccess, added to the tables TestAdmissionCELRules and
// TestGoAdmissionEqualsTheAPIServer walk (which fail when a rule of the CRD has no case).
func init() {
	celCases = append(celCases,
		celCase{name: "externalAccess source ranges on a NodePort", field: "spec.externalAccess",
			invalid: "externalAccess: {type: NodePort, loadBalancerSourceRanges: [203.0.113.0/24]}",
			valid:   "externalAccess: {type: LoadBalancer, loadBalancerSourceRanges: [203.0.113.0/24]}"},
		celCase{name: "externalAccess source range not a CIDR", field: "spec.externalAccess.loadBalancerSourceRanges",
			invalid: "externalAccess: {type: LoadBalancer, loadBalancerSourceRanges: [203.0.113.7]}",
			valid:   "externalAccess: {type: LoadBalancer, loadBalancerSourceRanges: [203.0.113.7/32]}"},
		celCase{name: "externalAccess hostnameTemplate without {instance}", field: "spec.externalAccess.hostnameTemplate",
			invalid: "externalAccess: {type: LoadBalancer, hostnameTemplate: graph.example.com}",
			valid:   "externalAccess: {type: LoadBalancer, hostnameTemplate: '{instance}.graph.example.com'}"},
		celCase{name: "externalAccess hostnameTemplate not a DNS name", field: "spec.externalAccess.hostnameTemplate",
			invalid: "externalAccess: {type: LoadBalancer, hostnameTemplate: '{instance}.Graph.example.com.'}",
			valid:   "externalAccess: {type: LoadBalancer, hostnameTemplate: '{instance}-graph.example.com'}"},
	)
	admissionEdges = append(admissionEdges,
		"externalAccess: {type: NodePort}",
		"externalAccess: {type: ClusterIP}",
		"externalAccess: {type: LoadBalancer, loadBalancerSourceRanges: []}",
		"externalAccess: {type: NodePort, loadBalancerSourceRanges: []}",
		"externalAccess: {type: LoadBalancer, loadBalancerSourceRanges: ['::ffff:1.2.3.4/128']}",
		"externalAccess: {type: LoadBalancer, loadBalancerSourceRanges: ['2001:db8::/32']}",
		"externalAccess: {type: LoadBalancer, hostnameTemplate: '{instance}'}",
		"externalAccess: {type: LoadBalancer, hostnameTemplate: '{instance}.{instance}.example.com'}",
		"externalAccess: {type: LoadBalancer, hostnameTemplate: ''}",
		"externalAccess: {type: LoadBalancer, annotations: {a: b}}",
		"externalAccess: {}",
		"externalAccess: null",
	)
}
