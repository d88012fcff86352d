package check

import (
	"bytes"
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"
)

// writeTable writes the table that fill writes, its cells ended by tabs
// and its lines by newlines, in aligned columns two spaces apart and with
// no blank at the end of a line: what a text/tabwriter.Writer (padding
// 2, padded with spaces, no flags) writes of the same text, each line
// trimmed on the right. Without holding the table, which for a forecast
// of 85 000 paths weighs some 40 MB: fill is called twice, once to
// measure the columns and once to write them, and must write the same
// text both times. Text with what a tabwriter reads besides tabs and
// newlines ('\v', '\f', its escape '\xff') goes through a tabwriter.
func writeTable(w io.Writer, fill func(io.Writer)) {
	m := &aligner{}
	fill(m)
	m.end()
	if m.special {
		var table bytes.Buffer
		tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
		fill(tw)
		tw.Flush()
		for _, line := range strings.SplitAfter(table.String(), "\n") {
			_, _ = io.WriteString(w, strings.TrimRight(line, " \n")+strings.Repeat("\n", strings.Count(line, "\n")))
		}
		return
	}
	m.out, m.blocks, m.open, m.index = w, m.widths, nil, nil
	fill(m)
	m.end()
}

// aligner is one pass of writeTable: without out, it measures the
// columns; with it, it writes the lines aligned to them.
//
// As a tabwriter aligns: a line of k cells ended by a tab pads each of
// them to the width of its column's block (the widest cell in it and 2),
// and writes its last cell as it is; a column's block is a run of lines
// that each have a cell of that column ended by a tab.
type aligner struct {
	out     io.Writer
	line    []byte // the line being written, to its newline
	special bool
	// widths are per column those of its blocks, in order (measuring);
	// blocks are the widths measured (writing). open says per column
	// whether a block is open, index which block it is.
	widths, blocks [][]int
	open           []bool
	index          []int
	written        []byte
}

func (m *aligner) Write(p []byte) (int, error) {
	for rest := p; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			m.line = append(m.line, rest...)
			break
		}
		m.line = append(m.line, rest[:i]...)
		m.endLine(true)
		rest = rest[i+1:]
	}
	return len(p), nil
}

// end writes what is left after the last newline, as a line without
// one.
func (m *aligner) end() {
	if len(m.line) > 0 {
		m.endLine(false)
	}
}

// endLine measures or writes the line written since the last newline;
// newline says that one ends it.
func (m *aligner) endLine(newline bool) {
	line := m.line
	m.line = m.line[:0]
	for _, b := range []byte{'\v', '\f', '\xff'} {
		m.special = m.special || bytes.IndexByte(line, b) >= 0
	}
	k := bytes.Count(line, []byte{'\t'}) // cells ended by a tab
	for len(m.open) < k {
		m.open, m.index = append(m.open, false), append(m.index, -1)
		if m.out == nil {
			m.widths = append(m.widths, nil)
		}
	}
	for c := k; c < len(m.open); c++ {
		m.open[c] = false // the block ends
	}
	out := m.written[:0]
	for c := 0; c < k; c++ {
		i := bytes.IndexByte(line, '\t')
		cell := line[:i]
		line = line[i+1:]
		if !m.open[c] {
			m.open[c] = true
			m.index[c]++
			if m.out == nil {
				m.widths[c] = append(m.widths[c], 0)
			}
		}
		width := utf8.RuneCount(cell) + 2
		if m.out == nil {
			m.widths[c][m.index[c]] = max(m.widths[c][m.index[c]], width)
			continue
		}
		out = append(out, cell...)
		for range m.blocks[c][m.index[c]] - width + 2 {
			out = append(out, ' ')
		}
	}
	if m.out != nil {
		out = bytes.TrimRight(append(out, line...), " ")
		if newline {
			out = append(out, '\n')
		}
		_, _ = m.out.Write(out)
		m.written = out
	}
}
