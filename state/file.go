package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/onchain-exporter/onchain_exporter/budget"
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/decode"
	"github.com/onchain-exporter/onchain_exporter/expand"
	"github.com/onchain-exporter/onchain_exporter/schedule"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// fileVersion is the format of the state files; a file of another
// version is ignored (a cold start for its API).
const fileVersion = 3

// File is the content of one API's file.
type File struct {
	Version int                          `json:"version"`
	API     string                       `json:"api"`
	Account string                       `json:"account"` // upstream.Account: a digest
	Tuples  map[string]SavedTuple        `json:"tuples,omitempty"`
	Delays  map[string]schedule.Estimate `json:"delays,omitempty"`
	Pauses  []upstream.Pause             `json:"pauses,omitempty"`
	// Lists are the last answers of the listing endpoints, by path; in
	// memory, the Cache of package expand holds them.
	Lists map[string]*expand.Answer `json:"lists,omitempty"`
	// Budget is the day's count of calls against daily_budget.
	Budget *budget.Saved `json:"budget,omitempty"`

	// raw holds the tuples' entries of a file read, until tuples reads
	// the ones configured.
	raw json.RawMessage
}

// NewFile returns an empty file of the current format for an API
// section of account (upstream.Account).
func NewFile(api, account string) *File {
	return &File{Version: fileVersion, API: api, Account: account, Tuples: map[string]SavedTuple{}}
}

// maxFile bounds what a state file may hold: far more than any
// configuration max_tuples allows writes.
const maxFile = 256 << 20

// baseFile and perTuple make the bound of one API's file under a
// configuration (fileBound): room for its listing answers, learned delays
// and pauses, and for each tuple max_tuples allows its last values (a
// row's fields, up to max_fields, with their labels) and plan.
const (
	baseFile = 16 << 20
	perTuple = 32 << 10
)

// fileBound is the most a file of API section a is read up to: a larger
// one was not written for this configuration (a file of 600 000 entries
// of an old one), and reading it would spend memory and start-up time on
// what nothing asks for. Without a section, maxFile.
func fileBound(a *config.API) int64 {
	if a == nil {
		return maxFile
	}
	n := max(a.MaxTuples, len(a.Tuples), 1)
	return min(maxFile, baseFile+int64(n)*perTuple)
}

// readFile reads a state file that is a regular file of at most limit
// bytes: a FIFO, a device or a directory under its name is not read (a
// FIFO would hang the start), nor a larger file, whose size is known
// before anything is read.
func readFile(path string, limit int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	switch {
	case fi.IsDir():
		return nil, errors.New("is a directory")
	case fi.Mode()&os.ModeNamedPipe != 0:
		return nil, errors.New("is a named pipe, not a regular file")
	case !fi.Mode().IsRegular():
		return nil, errors.New("not a regular file")
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("%d bytes, more than a state file holds for this configuration (%d MiB); not read", fi.Size(), limit>>20)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Read in one buffer of the size seen, plus one byte to see a file
	// that grew since.
	data := make([]byte, fi.Size()+1)
	n, err := io.ReadFull(f, data)
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return data[:n], nil
	case err != nil:
		return nil, err
	}
	rest, err := io.ReadAll(io.LimitReader(f, limit+1-int64(n)))
	if err == nil && int64(n+len(rest)) > limit {
		err = fmt.Errorf("more than a state file holds for this configuration (%d MiB); not read", limit>>20)
	}
	return append(data, rest...), err
}

// Decode reads the file of API api, every tuple's entry included; any
// problem is an error naming it. What it returns is within the bounds the
// exporter trusts: counters are not negative, no listing answer is null.
// (A Store reads a file with decodeFile and only the entries of the
// tuples configured, checked: check.go.)
func Decode(data []byte, api string) (*File, error) {
	f, err := decodeFile(data, api)
	if err != nil {
		return nil, err
	}
	var bad []problem
	if f.Tuples, _, bad = f.tuples(nil); len(bad) > 0 {
		return nil, fmt.Errorf("corrupt state: %s: %s", bad[0].entry, bad[0].err)
	}
	return f, nil
}

// decodeFile reads a file but its tuples' entries, which stay raw (in
// f.raw) until tuples reads those of the tuples configured: a file full
// of entries nobody asks for costs their bytes, not their values.
func decodeFile(data []byte, api string) (*File, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("empty file")
	}
	var head struct {
		Version int    `json:"version"`
		API     string `json:"api"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("not a state file: %s", decode.ShortJSONError(err))
	}
	if head.Version != fileVersion {
		return nil, fmt.Errorf("format version %d, this exporter reads version %d", head.Version, fileVersion)
	}
	if head.API != api {
		return nil, fmt.Errorf("the file holds the state of API %q, not %q", head.API, api)
	}
	// The tuples' entries stay raw; the listing rows are read with
	// numbers as upstream.List reads them; the rest as it is.
	var w struct {
		File
		Tuples json.RawMessage `json:"tuples,omitempty"` // over File's
		Lists  json.RawMessage `json:"lists,omitempty"`  // over File's
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("corrupt state: %s", decode.ShortJSONError(err))
	}
	f := &w.File
	if len(w.Lists) > 0 {
		dec := json.NewDecoder(bytes.NewReader(w.Lists))
		dec.UseNumber()
		if err := dec.Decode(&f.Lists); err != nil {
			return nil, fmt.Errorf("corrupt state: %s", decode.ShortJSONError(err))
		}
	}
	f.Tuples, f.raw = map[string]SavedTuple{}, w.Tuples
	if len(f.raw) > 0 && f.raw[0] != '{' && string(f.raw) != "null" {
		return nil, errors.New("corrupt state: the tuples are not an object")
	}
	for k, l := range f.Lists {
		if l == nil {
			delete(f.Lists, k)
		}
	}
	return f, nil
}

// problem is an entry of a file that is not taken, and why.
type problem struct{ entry, err string }

// tuples reads the raw entries of the tuples keep asks for (every one when
// keep is nil), counters made non-negative; the others are counted as
// skipped, their values never built. An entry of the wrong types is a
// problem and is not taken; the rest are.
func (f *File) tuples(keep func(key string) bool) (out map[string]SavedTuple, skipped int, bad []problem) {
	out = map[string]SavedTuple{}
	dec := json.NewDecoder(bytes.NewReader(f.raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return out, 0, nil // none (decodeFile refused anything but an object or null)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return out, skipped, append(bad, problem{"", decode.ShortJSONError(err)})
		}
		key, _ := tok.(string)
		if keep != nil && !keep(key) {
			// Read past, into nothing: no value is built.
			var skip struct{}
			var typ *json.UnmarshalTypeError
			if err := dec.Decode(&skip); err != nil && !errors.As(err, &typ) {
				return out, skipped, append(bad, problem{"tuples." + key, decode.ShortJSONError(err)})
			}
			skipped++
			continue
		}
		var t SavedTuple
		if err := dec.Decode(&t); err != nil {
			var typ *json.UnmarshalTypeError
			if !errors.As(err, &typ) {
				return out, skipped, append(bad, problem{"tuples." + key, decode.ShortJSONError(err)})
			}
			bad = append(bad, problem{"tuples." + key, decode.ShortJSONError(err)})
			continue
		}
		t.State.sanitize()
		out[key] = t
	}
	return out, skipped, bad
}
