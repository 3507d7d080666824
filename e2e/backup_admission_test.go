//go:build e2e

package e2e_test

func init() {
	const s3 = "{endpoint: 'https://s3.example.org', bucket: backups, credentialsSecret: {name: s3-creds}}"
	dest := func(s3 string) string {
		return "bootstrap: {fromBackup: {destination: {s3: " + s3 + "}, key: a/b.snapshot}}"
	}
	celCases = append(celCases,
		celCase{name: "fromBackup names both", field: "spec.bootstrap.fromBackup",
			invalid: "bootstrap: {fromBackup: {name: b, destination: {s3: " + s3 + "}, key: k}}", valid: "bootstrap: {fromBackup: {name: b}}"},
		celCase{name: "fromBackup destination without key", field: "spec.bootstrap.fromBackup",
			invalid: "bootstrap: {fromBackup: {destination: {s3: " + s3 + "}}}", valid: dest(s3)},
		celCase{name: "fromBackup bucket", field: "spec.bootstrap.fromBackup.destination.s3.bucket",
			invalid: dest("{endpoint: 'https://s3.example.org', bucket: Backups_, credentialsSecret: {name: s3-creds}}"), valid: dest(s3)},
		celCase{name: "fromBackup caSecret", field: "spec.bootstrap.fromBackup.destination.s3.caSecret.name",
			invalid: dest("{endpoint: 'https://s3.example.org', bucket: backups, credentialsSecret: {name: s3-creds}, caSecret: {name: Bad_Name}}"),
			valid:   dest("{endpoint: 'https://s3.example.org', bucket: backups, credentialsSecret: {name: s3-creds}, caSecret: {name: s3-ca}}")},
		celCase{name: "fromBackup credentialsSecret", field: "spec.bootstrap.fromBackup.destination.s3.credentialsSecret.name",
			invalid: dest("{endpoint: 'https://s3.example.org', bucket: backups, credentialsSecret: {name: Bad_Name}}"), valid: dest(s3)},
		celCase{name: "fromBackup endpoint", field: "spec.bootstrap.fromBackup.destination.s3.endpoint",
			invalid: dest("{endpoint: 's3.example.org/path', bucket: backups, credentialsSecret: {name: s3-creds}}"), valid: dest(s3)},
		celCase{name: "fromBackup prefix", field: "spec.bootstrap.fromBackup.destination.s3.prefix",
			invalid: dest("{endpoint: 'https://s3.example.org', bucket: backups, prefix: /prod/, credentialsSecret: {name: s3-creds}}"),
			valid:   dest("{endpoint: 'https://s3.example.org', bucket: backups, prefix: prod, credentialsSecret: {name: s3-creds}}")},
	)
	transitionCases = append(transitionCases,
		struct{ name, field, base, invalid, valid string }{name: "fromBackup added to an existing cluster", field: "spec",
			base: "{}", invalid: "{bootstrap: {fromBackup: {name: b}}}", valid: "{dataInstances: 3}"},
	)
}
