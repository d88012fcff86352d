package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/onchain-exporter/onchain_exporter/internal/jsonerr"
)

// fileVersion is the format of the state files; a file of another
// version is ignored (a cold start for its API).
const fileVersion = 3

// File is the content of one API's file: each owner's snapshot (JSON),
// stored and handed back as the owner wrote it.
type File struct {
	Version int    `json:"version"`
	API     string `json:"api"`
	Account string `json:"account"` // the account's digest (upstream.Account)
	// Tuples are the collector's per-tuple entries, by tuple key.
	Tuples map[string]json.RawMessage `json:"tuples,omitempty"`
	// Delays are the schedule's learned estimates (schedule.Book).
	Delays json.RawMessage `json:"delays,omitempty"`
	// Pauses are the API's pauses in force (upstream.Client).
	Pauses json.RawMessage `json:"pauses,omitempty"`
	// Lists are the last answers of the listing endpoints, by path
	// (expand.Cache).
	Lists json.RawMessage `json:"lists,omitempty"`
	// Budget is the day's count of calls against daily_budget
	// (budget.Budget).
	Budget json.RawMessage `json:"budget,omitempty"`

	// raw holds the tuples' entries of a file read, until tuples.
	raw json.RawMessage
}

// NewFile returns an empty file of the current format for an API
// section of account.
func NewFile(api, account string) *File {
	return &File{Version: fileVersion, API: api, Account: account, Tuples: map[string]json.RawMessage{}}
}

// maxFile bounds what a state file may hold: far more than any
// configuration max_tuples allows writes.
const maxFile = 256 << 20

// baseFile and perTuple make fileBound: room for the listing answers,
// delays and pauses, and per tuple for its last row (up to max_fields
// fields with their labels) and plan.
const (
	baseFile = 16 << 20
	perTuple = 32 << 10
)

// fileBound is the most the file of a section of n tuples is read up to
// (maxFile for n < 0: no configuration): a larger one was written for
// another configuration, and reading it would spend memory and start-up
// time on what nothing asks for.
func fileBound(n int) int64 {
	if n < 0 {
		return maxFile
	}
	return min(maxFile, baseFile+int64(max(n, 1))*perTuple)
}

// readFile reads a regular file of at most limit bytes, refused on its
// size before anything is read; a FIFO (which would hang the start), a
// device or a directory is not read.
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

// Decode reads the file of API api, every tuple's entry included; a
// problem of its structure is an error naming it. The owners' snapshots
// are not checked.
func Decode(data []byte, api string) (*File, error) {
	f, err := decodeFile(data, api)
	if err != nil {
		return nil, err
	}
	f.Tuples, _ = f.tuples(nil)
	f.raw = nil
	return f, nil
}

// decodeFile reads a file but its tuples' entries, which stay in f.raw
// until tuples: entries nobody asks for cost their bytes, not copies.
func decodeFile(data []byte, api string) (*File, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("empty file")
	}
	var head struct {
		Version int    `json:"version"`
		API     string `json:"api"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("not a state file: %s", jsonerr.Short(err))
	}
	if head.Version != fileVersion {
		return nil, fmt.Errorf("format version %d, this exporter reads version %d", head.Version, fileVersion)
	}
	if head.API != api {
		return nil, fmt.Errorf("the file holds the state of API %q, not %q", head.API, api)
	}
	var w struct {
		File
		Tuples json.RawMessage `json:"tuples,omitempty"` // over File's
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("corrupt state: %s", jsonerr.Short(err))
	}
	f := &w.File
	f.Tuples, f.raw = map[string]json.RawMessage{}, w.Tuples
	if len(f.raw) > 0 && f.raw[0] != '{' && string(f.raw) != "null" {
		return nil, errors.New("corrupt state: the tuples are not an object")
	}
	for _, part := range []*json.RawMessage{&f.Delays, &f.Pauses, &f.Lists, &f.Budget} {
		if string(*part) == "null" {
			*part = nil // as if absent
		}
	}
	return f, nil
}

// tuples copies the raw entries keep asks for (all when keep is nil) and
// counts the others, never copied. decodeFile saw valid JSON, the tuples
// an object or null.
func (f *File) tuples(keep func(key string) bool) (out map[string]json.RawMessage, skipped int) {
	out = map[string]json.RawMessage{}
	dec := json.NewDecoder(bytes.NewReader(f.raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return out, 0 // none
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return out, skipped
		}
		key, _ := tok.(string)
		if keep != nil && !keep(key) {
			var skip struct{}
			var typ *json.UnmarshalTypeError
			if err := dec.Decode(&skip); err != nil && !errors.As(err, &typ) {
				return out, skipped
			}
			skipped++
			continue
		}
		var e json.RawMessage
		if err := dec.Decode(&e); err != nil {
			return out, skipped
		}
		out[key] = e
	}
	return out, skipped
}
