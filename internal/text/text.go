// Package text shortens texts that came from outside (an upstream's
// message, a request's value, a peer's field name) before they are
// logged, quoted in an error or answered: the standard library alone.
package text

import "unicode/utf8"

// Prefix is the longest prefix of s of at most n bytes that ends on a
// character boundary: s itself when it is no longer than n.
func Prefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := max(n, 0)
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}

// Clip is s cut to Prefix(s, n), with mark after it when anything was
// cut.
func Clip(s string, n int, mark string) string {
	if p := Prefix(s, n); len(p) < len(s) {
		return p + mark
	}
	return s
}
