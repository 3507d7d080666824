//go:build e2e

package e2e_test

// The admission cases of the day-2 fields, added to the tables TestAdmissionCELRules and
// TestGoAdmissionEqualsTheAPIServer walk (which fail when a rule of the CRD has no case).
func init() {
	celCases = append(celCases,
		celCase{name: "preferredMain not an instance name", field: "spec.preferredMain",
			invalid: "preferredMain: instance_01", valid: "preferredMain: instance_1"},
		celCase{name: "clusterSecretName not a Secret name", field: "spec.tls.clusterSecretName",
			invalid: "tls: {secretName: b, clusterSecretName: Peer_TLS}", valid: "tls: {secretName: b, clusterSecretName: peer-tls}"},
		celCase{name: "preferredMain beyond the declared instances", field: "spec",
			invalid: "{preferredMain: instance_2, dataInstances: 2}", valid: "{preferredMain: instance_2, dataInstances: 3}"},
	)
	transitionCases = append(transitionCases,
		struct{ name, field, base, invalid, valid string }{name: "a shrink that retires preferredMain", field: "spec",
			base: "{dataInstances: 3, preferredMain: instance_2}", invalid: "{dataInstances: 2, preferredMain: instance_2}",
			valid: "{dataInstances: 2, preferredMain: instance_1}"},
		struct{ name, field, base, invalid, valid string }{name: "coordinators change while hibernated", field: "spec",
			base: "{hibernate: true}", invalid: "{hibernate: true, coordinators: 5}", valid: "{hibernate: false}"},
		struct{ name, field, base, invalid, valid string }{name: "coordinators change in the update that hibernates", field: "spec",
			base: "{}", invalid: "{hibernate: true, coordinators: 5}", valid: "{hibernate: true}"},
		struct{ name, field, base, invalid, valid string }{name: "intra-cluster TLS turned on outside hibernation", field: "spec",
			base: "{tls: {secretName: b, intraCluster: false}}", invalid: "{tls: {secretName: b, intraCluster: true}}",
			valid: "{hibernate: true, tls: {secretName: b, intraCluster: true}}"},
		struct{ name, field, base, invalid, valid string }{name: "spec.tls added to a running cluster", field: "spec",
			base: "{}", invalid: "{tls: {secretName: b}}", valid: "{tls: {secretName: b, intraCluster: false}}"},
	)
	admissionEdges = append(admissionEdges,
		"preferredMain: instance_1",
		"preferredMain: instance_2",
		"{preferredMain: instance_127, dataInstances: 128}",
		"preferredMain: instance_1000",
		"preferredMain: ''",
		"preferredMain: null",
		"hibernate: true",
		"hibernate: null",
		"hibernate: 'yes'",
	)
}
