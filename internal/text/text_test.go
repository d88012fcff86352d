package text

import "testing"

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
