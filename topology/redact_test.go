package topology

import (
	"strings"
	"testing"
)

func TestRedactCommand(t *testing.T) {
	for _, tc := range []struct {
		name, query, want string
	}{
		{"a coordinator command carries no secret", "DEMOTE INSTANCE instance_2", "DEMOTE INSTANCE instance_2"},
		{"registration is kept whole",
			"REGISTER INSTANCE instance_1 WITH CONFIG {'bolt_server': 'mg-data-1.mg-data.default.svc.cluster.local:7687'}",
			"REGISTER INSTANCE instance_1 WITH CONFIG {'bolt_server': 'mg-data-1.mg-data.default.svc.cluster.local:7687'}"},
		{"create user", "CREATE USER alice IDENTIFIED BY 's3cret'", "CREATE USER alice IDENTIFIED BY " + RedactedSecret},
		{"create user if not exists, lower case", "create user if not exists alice identified by \"s3cret\"",
			"create user if not exists alice identified by " + RedactedSecret},
		{"create user without a password", "CREATE USER alice", "CREATE USER alice"},
		{"a quote escaped inside the password", `CREATE USER alice IDENTIFIED BY 'it\'s; TO x'`, "CREATE USER alice IDENTIFIED BY " + RedactedSecret},
		{"set password for a user", "SET PASSWORD FOR alice TO 'n3w'", "SET PASSWORD FOR alice TO " + RedactedSecret},
		{"change one's own password: both", "SET PASSWORD TO 'n3w' REPLACE 'old'",
			"SET PASSWORD TO " + RedactedSecret + " REPLACE " + RedactedSecret},
		{"a back-quoted user named TO", "SET PASSWORD FOR `TO` TO 'n3w'", "SET PASSWORD FOR `TO` TO " + RedactedSecret},
		{"a parameter names the secret, it does not carry it", "CREATE USER alice IDENTIFIED BY $password",
			"CREATE USER alice IDENTIFIED BY $password"},
		{"the license setting", "SET DATABASE SETTING 'enterprise.license' TO 'mglk-abc'",
			"SET DATABASE SETTING 'enterprise.license' TO " + RedactedSecret},
		{"another setting is no secret", "SET DATABASE SETTING 'organization.name' TO 'Acme'",
			"SET DATABASE SETTING 'organization.name' TO 'Acme'"},
		{"a second statement", "CREATE USER a; SET PASSWORD FOR a TO 'x'", "CREATE USER a; SET PASSWORD FOR a TO " + RedactedSecret},
		{"TO in another statement is not a password", "SET PASSWORD FOR a TO 'x'; SET INSTANCE instance_1 TO MAIN",
			"SET PASSWORD FOR a TO " + RedactedSecret + "; SET INSTANCE instance_1 TO MAIN"},
		{"an unterminated password runs to the end", "CREATE USER a IDENTIFIED BY 'abc", "CREATE USER a IDENTIFIED BY " + RedactedSecret},
		{"keywords inside a string match nothing", "RETURN 'SET PASSWORD TO x'", "RETURN 'SET PASSWORD TO x'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := RedactCommand(tc.query); got != tc.want {
				t.Errorf("RedactCommand(%q)\n got %q\nwant %q", tc.query, got, tc.want)
			}
		})
	}
}

// Whatever the user, the password and the white space between the words, the passwords and only
// they are replaced.
func FuzzRedactCommand(f *testing.F) {
	f.Add("alice", "s3cret", " ")
	f.Add("bob_2", "TO REPLACE;", "\n\t")
	f.Fuzz(func(t *testing.T, user, password, space string) {
		plainWord := user != "" && !strings.ContainsAny(user, "'\"`; \t\n\r")
		if !plainWord || password == "" || strings.ContainsAny(password, `'\`) || space == "" || strings.Trim(space, " \t\n\r") != "" {
			t.Skip()
		}
		quoted := "'" + password + "'"
		for query, want := range map[string]string{
			"CREATE USER " + user + space + "IDENTIFIED" + space + "BY" + space + quoted: "CREATE USER " + user + space + "IDENTIFIED" + space + "BY" + space + RedactedSecret,
			"SET PASSWORD TO" + space + quoted + space + "REPLACE" + space + quoted:      "SET PASSWORD TO" + space + RedactedSecret + space + "REPLACE" + space + RedactedSecret,
		} {
			if got := RedactCommand(query); got != want {
				t.Errorf("RedactCommand(%q)\n got %q\nwant %q", query, got, want)
			}
		}
	})
}
