package exposition

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// Scrapes write the bytes the client library's text encoder would, from
// label sets rendered once (BENCHMARKS.md). OpenMetrics when asked for,
// else text 0.0.4: a series' line is the same in both.
//
// OpenMetrics names a counter's family without _total, so a counter
// x_total beside a gauge x is one family twice, which strict parsers
// refuse (client_golang#829: go_memstats_alloc_bytes{,_total}). Such a
// counter is written in OpenMetrics as type unknown under its full name.

// formats are the answers /metrics gives, in the order it prefers them.
var formats = []expfmt.Format{expfmt.FmtOpenMetrics_1_0_0, expfmt.FmtOpenMetrics_0_0_1, expfmt.FmtText}

// render turns one built series into its exposition line, through the
// client library's text encoder.
func render(f *Family, m *dto.Metric) ([]byte, error) {
	name, help, typ := f.name, f.help, f.typ
	var b bytes.Buffer
	if _, err := expfmt.MetricFamilyToText(&b, &dto.MetricFamily{Name: &name, Help: &help, Type: &typ, Metric: []*dto.Metric{m}}); err != nil {
		return nil, err
	}
	out := b.Bytes()
	for i := 0; i < 2; i++ { // drop the # HELP and # TYPE lines
		if j := bytes.IndexByte(out, '\n'); j >= 0 && bytes.HasPrefix(out, []byte("# ")) {
			out = out[j+1:]
		}
	}
	return out, nil
}

// block is one family of the answer: rendered lines of ours, or a family
// gathered from the exporter's registry.
type block struct {
	name  string
	fam   *Family
	n     int
	lines []Sample
	mf    *dto.MetricFamily
}

var (
	helpEscaper   = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	omHelpEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
)

// gzipPool holds writers at BestSpeed: compressing 10 000 series at the
// default level took most of a scrape's time (BENCHMARKS.md), for a few
// percent of size on a link that is usually local.
var gzipPool = sync.Pool{New: func() any {
	gz, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed)
	return gz
}}

// Write writes the families of samples and own (the exporter's
// registry, gathered) sorted by name, in the format r asks for,
// gzip-compressed when it accepts it.
func Write(w http.ResponseWriter, r *http.Request, samples []Sample, own []*dto.MetricFamily) error {
	// Count each family's series, then carve its lines out of one slice:
	// no thousands of small slices growing.
	byFam := map[*Family]*block{}
	blocks := make([]*block, 0, len(own)+64)
	for _, mf := range own {
		blocks = append(blocks, &block{name: mf.GetName(), mf: mf})
	}
	for _, s := range samples {
		b := byFam[s.fam]
		if b == nil {
			b = &block{name: s.fam.name, fam: s.fam}
			byFam[s.fam] = b
			blocks = append(blocks, b)
		}
		b.n++
	}
	lines := make([]Sample, len(samples))
	off := 0
	for _, b := range blocks {
		if b.fam != nil {
			b.lines = lines[off : off : off+b.n]
			off += b.n
		}
	}
	for _, s := range samples {
		b := byFam[s.fam]
		b.lines = append(b.lines, s)
	}
	sort.SliceStable(blocks, func(i, j int) bool { return blocks[i].name < blocks[j].name })

	format := expfmt.NegotiateAccept(r.Header, formats...)
	om := format.FormatType() == expfmt.TypeOpenMetrics
	var clash map[*block]bool
	if om {
		clash = omClashes(blocks)
	}
	h := w.Header()
	h.Set("Content-Type", string(format))
	var out io.Writer = w
	if acceptsGzip(r) {
		h.Set("Content-Encoding", "gzip")
		h.Add("Vary", "Accept-Encoding")
		gz := gzipPool.Get().(*gzip.Writer)
		gz.Reset(w)
		defer func() {
			gz.Close()
			gzipPool.Put(gz)
		}()
		out = gz
	}
	bw := bufio.NewWriterSize(out, 64<<10)
	buf := make([]byte, 0, 512) // a line, written
	for _, b := range blocks {
		if mf := b.mf; mf != nil {
			if clash[b] { // only in OpenMetrics
				mf = asUnknown(mf)
			}
			var err error
			if om {
				_, err = expfmt.MetricFamilyToOpenMetrics(bw, mf)
			} else {
				_, err = expfmt.MetricFamilyToText(bw, mf)
			}
			if err != nil {
				return err
			}
			continue
		}
		writeHeader(bw, b.fam, om, clash[b])
		for _, s := range b.lines {
			buf = s.appendLine(buf[:0])
			bw.Write(buf)
		}
	}
	if om {
		bw.WriteString("# EOF\n")
	}
	return bw.Flush()
}

// writeHeader writes the HELP and TYPE lines of one of our families, and
// in OpenMetrics its UNIT. There a counter is named without _total,
// unless that clashes (unknown): then it is type unknown under its full
// name, which does not end in its unit, so it says none.
func writeHeader(bw *bufio.Writer, f *Family, om, unknown bool) {
	name, escaper, typ := f.name, helpEscaper, strings.ToLower(f.typ.String())
	if om {
		escaper = omHelpEscaper
		switch {
		case unknown:
			typ = "unknown"
		case f.typ == dto.MetricType_COUNTER:
			name = strings.TrimSuffix(name, "_total")
		}
	}
	writeStrings(bw, "# HELP ", name, " ")
	escaper.WriteString(bw, f.help)
	writeStrings(bw, "\n# TYPE ", name, " ", typ, "\n")
	if om && f.unit != "" && strings.HasSuffix(name, "_"+f.unit) {
		writeStrings(bw, "# UNIT ", name, " ", f.unit, "\n")
	}
}

// writeStrings writes s in order: a line's parts without joining them
// first, which would allocate a string a family at every scrape.
func writeStrings(bw *bufio.Writer, s ...string) {
	for _, p := range s {
		bw.WriteString(p)
	}
}

// omClashes returns the counter blocks whose name without _total is
// another block's name.
func omClashes(blocks []*block) map[*block]bool {
	names := make(map[string]bool, len(blocks))
	for _, b := range blocks {
		names[b.name] = true
	}
	var clash map[*block]bool
	for _, b := range blocks {
		typ := b.mf.GetType()
		if b.fam != nil {
			typ = b.fam.typ
		}
		if typ != dto.MetricType_COUNTER {
			continue
		}
		if short, ok := strings.CutSuffix(b.name, "_total"); ok && names[short] {
			if clash == nil {
				clash = map[*block]bool{}
			}
			clash[b] = true
		}
	}
	return clash
}

// asUnknown is a counter family as a family of type unknown: the same
// name, help, labels and values.
func asUnknown(mf *dto.MetricFamily) *dto.MetricFamily {
	typ := dto.MetricType_UNTYPED
	out := &dto.MetricFamily{Name: mf.Name, Help: mf.Help, Type: &typ, Unit: mf.Unit, Metric: make([]*dto.Metric, 0, len(mf.Metric))}
	for _, m := range mf.Metric {
		v := m.GetCounter().GetValue()
		out.Metric = append(out.Metric, &dto.Metric{
			Label:       m.Label,
			Untyped:     &dto.Untyped{Value: &v},
			TimestampMs: m.TimestampMs,
		})
	}
	return out
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		if strings.TrimSpace(strings.SplitN(part, ";", 2)[0]) == "gzip" {
			return true
		}
	}
	return false
}
