package text

import (
	"strings"
	"testing"
)

func TestPrefixEndsOnACharacter(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"abcdef", 3, "abc"},
		{"aé", 2, "a"}, // é is two bytes: not cut in its middle
		{"ééé", 5, "éé"},
		{"abc", 0, ""},
	} {
		if got := Prefix(tc.s, tc.n); got != tc.want {
			t.Errorf("Prefix(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
	if got := Clip("abcdef", 3, "…"); got != "abc…" {
		t.Errorf("Clip: %q", got)
	}
	if got := Clip("abc", 3, "…"); got != "abc" {
		t.Errorf("Clip of a short text: %q", got)
	}
}

// Outside writes what would act among the exporter's words as \u{…} and
// keeps a text to n bytes with the mark: a U+202E cannot turn the words
// after it around, ESC and BEL do not reach a terminal, and 1 MiB is not
// a label. Taken twice, a text stays as taken once.
func TestOutsideIsInertAndShort(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"PREMIUM", 128, "PREMIUM"},
		{"refused: 0 series\u202E", 128, `refused: 0 series\u{202E}`},
		{"a\x1b[31mred\x07", 128, `a\u{1B}[31mred\u{7}`},
		{"line\nnext\u2028", 128, `line\u{A}next\u{2028}`},
		{"\u2066iso\u2069 \u200Emark\u200F \u061C \u202Aemb\u202C", 128,
			`\u{2066}iso\u{2069} \u{200E}mark\u{200F} \u{61C} \u{202A}emb\u{202C}`},
		{"bad\xffbyte", 128, "bad\uFFFDbyte"},
		{"日本語", 128, "日本語"},
		{"abcdefgh", 8, "abcdefgh"},
		{"abcdefghi", 8, "abcde…"},
		{"ab\u202Ecdefgh", 12, "ab…"}, // the escape is not cut in its middle
		{"éééé", 7, "éé…"},
		{strings.Repeat("x", 1<<20), 128, strings.Repeat("x", 125) + "…"},
	} {
		got := Outside(tc.s, tc.n)
		if got != tc.want {
			t.Errorf("Outside(%.40q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
		if len(got) > tc.n {
			t.Errorf("Outside(%.40q, %d) is %d bytes", tc.s, tc.n, len(got))
		}
		if again := Outside(got, tc.n); again != got {
			t.Errorf("Outside twice: %q, once %q", again, got)
		}
	}
}
