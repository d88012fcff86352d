package backfill

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"

	"github.com/onchain-exporter/onchain_exporter/series"
)

// The OpenMetrics file. The format wants each family's samples together
// and each series' samples together, oldest first; the history arrives
// series after series of every family. So each family is written to a
// file of its own in a directory beside the output (FILE.parts) as its
// series come, and the output is those files one after the other, each
// under its HELP and TYPE, then "# EOF": memory stays that of a buffer per
// family, whatever the history's length. The parts stay until the output
// is whole, so that an interrupted run goes on where it stopped: the
// progress file records each part's length after every series committed,
// and a resumed run cuts each part back to it.

type openMetrics struct {
	out, dir string
	replace  bool
	fams     map[string]*famPart
	logger   log.Logger
	// w buffers the writes to cur, the part of the series being written:
	// one buffer for all the parts (a series is written whole, one at a
	// time), where one a family held 64 KiB for each of a thousand.
	w   *bufio.Writer
	cur *famPart
}

type famPart struct {
	fam  series.Family
	f    *os.File
	size int64 // bytes written, flushed or not
}

// newOpenMetrics opens the parts of out, cutting back to the lengths
// recorded; a part not recorded is started empty. A part recorded but
// missing or shorter than recorded is an error: the output would lack
// what the progress file says is in it.
func newOpenMetrics(out string, replace bool, recorded map[string]familyRecord, logger log.Logger) (*openMetrics, error) {
	o := &openMetrics{out: out, dir: out + ".parts", replace: replace, fams: map[string]*famPart{}, logger: logger}
	if err := makeParts(o.dir, out); err != nil {
		return nil, err
	}
	for name, r := range recorded {
		path := filepath.Join(o.dir, name)
		if fi, err := os.Stat(path); err != nil || fi.Size() < r.Size {
			return nil, fmt.Errorf("%s holds less than the progress file records (%d bytes): remove the progress file to start over", path, r.Size)
		}
		p, err := o.open(series.Family{Name: name, Help: r.Help, Type: r.Type}, 0)
		if err != nil {
			return nil, err
		}
		if err := p.f.Truncate(r.Size); err != nil {
			return nil, err
		}
		if _, err := p.f.Seek(r.Size, io.SeekStart); err != nil {
			return nil, err
		}
		p.size = r.Size
	}
	return o, nil
}

// open opens the part of a family; flag os.O_TRUNC starts it empty.
func (o *openMetrics) open(f series.Family, flag int) (*famPart, error) {
	file, err := os.OpenFile(filepath.Join(o.dir, f.Name), os.O_CREATE|os.O_RDWR|flag, 0o644)
	if err != nil {
		return nil, err
	}
	p := &famPart{fam: f, f: file}
	o.fams[f.Name] = p
	return p, nil
}

// to makes p the part the buffer writes to, what it holds of the part
// before written out.
func (o *openMetrics) to(p *famPart) error {
	if o.cur == p {
		return nil
	}
	if err := o.flush(); err != nil {
		return err
	}
	if o.w == nil {
		o.w = bufio.NewWriterSize(p.f, 64<<10)
	}
	o.w.Reset(p.f)
	o.cur = p
	return nil
}

// flush writes out what the buffer holds of the current part.
func (o *openMetrics) flush() error {
	if o.cur == nil {
		return nil
	}
	if err := o.w.Flush(); err != nil {
		return fmt.Errorf("%s: %w", o.cur.f.Name(), err)
	}
	return nil
}

func (o *openMetrics) series(def *seriesDef, each func(add func(ms int64, v float64) error) error) error {
	p := o.fams[def.fam.Name]
	if p == nil {
		var err error
		if p, err = o.open(def.fam, os.O_TRUNC); err != nil {
			return err
		}
	}
	if err := o.to(p); err != nil {
		return err
	}
	prefix := def.text + " "
	buf := make([]byte, 0, 128)
	return each(func(ms int64, v float64) error {
		buf = append(buf[:0], prefix...)
		// As the exposition formats write it: NaN, +Inf and -Inf included.
		buf = strconv.AppendFloat(buf, v, 'g', -1, 64)
		buf = append(buf, ' ')
		buf = appendTimestamp(buf, ms)
		buf = append(buf, '\n')
		n, err := o.w.Write(buf)
		p.size += int64(n)
		return err
	})
}

// commit flushes every part and returns their lengths for the progress
// file: what is recorded is on disk.
func (o *openMetrics) commit() (map[string]int64, error) {
	if err := o.flush(); err != nil {
		return nil, err
	}
	sizes := make(map[string]int64, len(o.fams))
	for name, p := range o.fams {
		sizes[name] = p.size
	}
	return sizes, nil
}

// finish writes the output from the parts, sorted by family, and removes
// the parts; a run that did not write everything, or could not put the
// output where it was asked, leaves them for the next.
func (o *openMetrics) finish(complete bool) error {
	if err := o.flush(); err != nil {
		return err
	}
	defer func() {
		for _, p := range o.fams {
			p.f.Close()
		}
	}()
	if !complete {
		return nil
	}
	f, err := os.CreateTemp(filepath.Dir(o.out), filepath.Base(o.out)+".tmp-*")
	if err != nil {
		return err
	}
	if err := o.writeOutput(f); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := place(f.Name(), o.out, o.replace); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := removeParts(o.dir); err != nil {
		level.Warn(o.logger).Log("msg", "the output is written; the parts directory is left", "err", err)
	}
	return nil
}

// writeOutput writes the parts, sorted by family, and # EOF to f, and
// closes it.
func (o *openMetrics) writeOutput(f *os.File) error {
	for _, n := range slices.Sorted(maps.Keys(o.fams)) {
		if err := appendPart(f, o.fams[n]); err != nil {
			return errors.Join(err, f.Close())
		}
	}
	_, err := f.WriteString("# EOF\n")
	// As os.Create would have made it: promtool may run as another user.
	return errors.Join(err, f.Chmod(0o644), f.Sync(), f.Close())
}

func (o *openMetrics) refused() int { return 0 }

// appendPart writes one family: HELP, TYPE and its part. The part is
// copied file to file (copy_file_range on Linux), not through memory.
func appendPart(f *os.File, p *famPart) error {
	if p.size == 0 {
		return nil
	}
	base, typ := omFamily(p.fam)
	if _, err := fmt.Fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", base, escaper.Replace(p.fam.Help), base, typ); err != nil {
		return err
	}
	if _, err := p.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	_, err := io.Copy(f, &io.LimitedReader{R: p.f, N: p.size})
	return err
}

// omFamily is the family name and type OpenMetrics writes in HELP and
// TYPE. A counter's family is its name without _total, its samples keep
// it; a counter named otherwise is written as unknown, so that its
// samples keep the name the live exposition serves.
func omFamily(f series.Family) (name, typ string) {
	if f.Type == series.Counter {
		if base, ok := strings.CutSuffix(f.Name, "_total"); ok {
			return base, "counter"
		}
		return f.Name, "unknown"
	}
	return f.Name, f.Type
}

// appendTimestamp writes Unix milliseconds as OpenMetrics seconds.
func appendTimestamp(b []byte, ms int64) []byte {
	b = strconv.AppendInt(b, ms/1000, 10)
	if r := ms % 1000; r != 0 {
		b = fmt.Appendf(b, ".%03d", max(r, -r))
	}
	return b
}
