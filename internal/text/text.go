// Package text shortens texts that came from outside (an upstream's
// message, a request's value, a peer's field name) before they are
// logged, quoted in an error or answered, and makes them inert where they
// sit among the exporter's own words (Outside): the standard library
// alone.
package text

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

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

// Cut is the mark Outside ends a text with when it cut it.
const Cut = "…"

// Outside is a text from outside (a plan's name, an upstream's error
// message, a peer's name, a path a listing gave) made fit to stand among
// the exporter's own words on a page, in a label or in a log line: every
// character that would act instead of show is written as \u{…} (control
// characters, ESC and BEL among them, line and paragraph separators, and
// the bidirectional marks, embeddings, overrides and isolates, U+061C,
// U+200E–U+200F, U+202A–U+202E, U+2066–U+2069, so that U+202E cannot turn
// the words after it around), bytes that are not UTF-8 are U+FFFD, and the
// whole is at most n bytes, cut between characters, never inside an
// escape, and ended by Cut when anything was left out. Outside of its own
// result is that result: a text taken twice is not escaped twice.
func Outside(s string, n int) string {
	size, clean := 0, true
	for i, r := range s {
		p := shown(s, i, r)
		size += len(p)
		clean = clean && len(p) == utf8.RuneLen(r) && r != utf8.RuneError
		if size > n {
			break
		}
	}
	switch {
	case size <= n && clean:
		return s
	case size <= n:
		return escaped(s, size)
	}
	return escaped(s, max(n-len(Cut), 0)) + Cut
}

// escaped is s as Outside writes it, its characters kept while they fit
// in n bytes.
func escaped(s string, n int) string {
	var b strings.Builder
	for i, r := range s {
		p := shown(s, i, r)
		if b.Len()+len(p) > n {
			break
		}
		b.WriteString(p)
	}
	return b.String()
}

// shown is how Outside writes the character r at s[i:].
func shown(s string, i int, r rune) string {
	switch {
	case acts(r):
		return `\u{` + strings.ToUpper(strconv.FormatInt(int64(r), 16)) + `}`
	case r == utf8.RuneError:
		if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
			return "\uFFFD"
		}
	}
	return s[i : i+utf8.RuneLen(r)]
}

// acts says whether a character acts on the text around it rather than
// show: a control character, a line or paragraph separator, or a
// bidirectional formatting character.
func acts(r rune) bool {
	switch {
	case unicode.IsControl(r), r == '\u2028', r == '\u2029', r == '\u061C', r == '\u200E', r == '\u200F':
		return true
	case r >= '\u202A' && r <= '\u202E', r >= '\u2066' && r <= '\u2069':
		return true
	}
	return false
}
