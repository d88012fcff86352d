package check

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"text/tabwriter"
)

// TestWriteTableAlignsAsTabwriter: writeTable writes what the tabwriter
// the check used wrote, trimmed on the right, of tables of lines with
// more or fewer cells than the next (a column's blocks), empty cells,
// cells of several bytes a character, blanks at a line's end, a line
// without a newline, and what only a tabwriter reads.
func TestWriteTableAlignsAsTabwriter(t *testing.T) {
	tables := []string{
		"  LINE\tENTRY\tPATH\tSERIES\tSHARE\n  6\tdata.metrics[0]\t/v1/btc/a\t1\t<1 %\n  \ttotal\t\t1\t\n",
		"a\tb\tc\n\naa\tbbb\n",
		"é\tñññ\tx \nabc\t\t\ty\nlast\tno newline",
		"a\vb\tc\nd\te\n",
		"a\fb\tc\nd\te\n",
		"",
		"\n\n",
		"x\t\t\t\n\t\t\t\n",
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		var b strings.Builder
		for range r.IntN(12) {
			for range r.IntN(6) {
				b.WriteString(strings.Repeat("wé "[r.IntN(3):], r.IntN(5)))
				b.WriteByte('\t')
			}
			b.WriteString(strings.Repeat("z ", r.IntN(3)))
			b.WriteByte('\n')
		}
		tables = append(tables, b.String())
	}
	for _, table := range tables {
		var want bytes.Buffer
		tw := tabwriter.NewWriter(&want, 0, 0, 2, ' ', 0)
		_, _ = io.WriteString(tw, table)
		tw.Flush()
		var trimmed strings.Builder
		for _, line := range strings.SplitAfter(want.String(), "\n") {
			trimmed.WriteString(strings.TrimRight(line, " \n") + strings.Repeat("\n", strings.Count(line, "\n")))
		}
		var got strings.Builder
		calls := 0
		writeTable(&got, func(w io.Writer) {
			calls++
			for _, line := range strings.SplitAfter(table, "\n") {
				fmt.Fprint(w, line) // a line a write, as the check writes
			}
		})
		if got.String() != trimmed.String() {
			t.Errorf("table %q:\n%q, want\n%q", table, got.String(), trimmed.String())
		}
		if calls != 2 {
			t.Errorf("table %q: filled %d times", table, calls)
		}
	}
}
