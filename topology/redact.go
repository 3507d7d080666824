package topology

import "strings"

// RedactedSecret replaces a secret in a command that status.operations records.
const RedactedSecret = "'<redacted>'"

// RedactCommand returns query with every secret literal replaced by RedactedSecret: the password
// of CREATE USER … IDENTIFIED BY, SET PASSWORD FOR … TO and SET PASSWORD TO … REPLACE (both
// passwords), and the value of SET DATABASE SETTING 'enterprise.license' TO (Memgraph v3.12.0
// MemgraphCypher.g4: createUser, setPassword, changePassword, setSetting). A query parameter
// ($name) is kept: it names the secret, it does not carry it. Keywords match in any case;
// string literals and back-quoted names are read whole, so a keyword inside them matches nothing.
// Every other query is returned unchanged.
func RedactCommand(query string) string {
	tokens := cypherTokens(query)
	secret := secretTokens(tokens)
	if len(secret) == 0 {
		return query
	}
	var b strings.Builder
	last := 0
	for _, i := range secret {
		b.WriteString(query[last:tokens[i].start])
		b.WriteString(RedactedSecret)
		last = tokens[i].end
	}
	b.WriteString(query[last:])
	return b.String()
}

// secretTokens returns, in order, the indexes of the tokens that carry a secret.
func secretTokens(tokens []token) []int {
	var secret []int
	for i, t := range tokens {
		if !t.literal() || strings.HasPrefix(t.text, "$") {
			continue
		}
		if secretFollows(tokens[:i]) {
			secret = append(secret, i)
		}
	}
	return secret
}

// secretFollows reports whether the token after before is a secret literal.
func secretFollows(before []token) bool {
	n := len(before)
	switch {
	case n >= 2 && before[n-2].is("IDENTIFIED") && before[n-1].is("BY"):
		return true
	case n >= 1 && (before[n-1].is("TO") || before[n-1].is("REPLACE")):
		if statementStarts(before, "SET", "PASSWORD") {
			return true
		}
		return n >= 2 && statementStarts(before, "SET", "DATABASE", "SETTING") &&
			strings.EqualFold(unquote(before[n-2].text), "enterprise.license")
	}
	return false
}

// statementStarts reports whether the statement the tokens end in starts with words.
func statementStarts(tokens []token, words ...string) bool {
	start := 0
	for i, t := range tokens {
		if t.text == ";" {
			start = i + 1
		}
	}
	stmt := tokens[start:]
	if len(stmt) < len(words) {
		return false
	}
	for i, w := range words {
		if !stmt[i].is(w) {
			return false
		}
	}
	return true
}

// token is a word, a literal or a punctuation character of a query, at query[start:end].
type token struct {
	text       string
	start, end int
}

func (t token) is(keyword string) bool { return strings.EqualFold(t.text, keyword) }

// literal reports whether the token can be a Cypher literal (not a keyword of the clauses
// secretFollows looks at, nor punctuation).
func (t token) literal() bool {
	return t.text != ";" && !strings.HasPrefix(t.text, "`")
}

// cypherTokens splits query at white space and ';', reading quoted strings ('…' and "…", with
// backslash escapes) and back-quoted names (`…`, a back-quote inside doubled) whole. An
// unterminated quote runs to the end of the query.
func cypherTokens(query string) []token {
	var tokens []token
	for i := 0; i < len(query); {
		switch c := query[i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == ';':
			tokens = append(tokens, token{";", i, i + 1})
			i++
		case c == '\'' || c == '"' || c == '`':
			end := quotedEnd(query, i)
			tokens = append(tokens, token{query[i:end], i, end})
			i = end
		default:
			end := i
			for end < len(query) && !strings.ContainsRune(" \t\n\r;'\"`", rune(query[end])) {
				end++
			}
			tokens = append(tokens, token{query[i:end], i, end})
			i = end
		}
	}
	return tokens
}

// quotedEnd returns the end of the quoted token that starts at query[start].
func quotedEnd(query string, start int) int {
	quote := query[start]
	for i := start + 1; i < len(query); i++ {
		switch {
		case query[i] == '\\' && quote != '`':
			i++
		case query[i] == quote && quote == '`' && i+1 < len(query) && query[i+1] == '`':
			i++
		case query[i] == quote:
			return i + 1
		}
	}
	return len(query)
}

// unquote strips a string literal's quotes.
func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '\'' || s[0] == '"') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}
