package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/onchain-exporter/onchain_exporter/budget"
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
}

// NewFile returns an empty file of the current format for an API
// section of account (upstream.Account).
func NewFile(api, account string) *File {
	return &File{Version: fileVersion, API: api, Account: account, Tuples: map[string]SavedTuple{}}
}

// maxFile bounds what a state file may hold: far more than any
// configuration max_tuples allows writes.
const maxFile = 256 << 20

// readFile reads a state file that is a regular file of a sane size: a
// FIFO, a device or a directory under its name is not read (a FIFO would
// hang the start), nor a file larger than maxFile.
func readFile(path string) ([]byte, error) {
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
	if fi.Size() > maxFile {
		return nil, fmt.Errorf("%d bytes, more than a state file holds (%d MiB)", fi.Size(), maxFile>>20)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFile+1))
	if err == nil && len(data) > maxFile {
		err = fmt.Errorf("more than a state file holds (%d MiB)", maxFile>>20)
	}
	return data, err
}

// Decode reads the file of API api; any problem is an error naming it.
// What it returns is within the bounds the exporter trusts: counters are
// not negative, no listing answer is null.
func Decode(data []byte, api string) (*File, error) {
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
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // listing rows read as upstream.List reads them
	f := &File{}
	if err := dec.Decode(f); err != nil {
		return nil, fmt.Errorf("corrupt state: %s", decode.ShortJSONError(err))
	}
	// Data after the end was refused by the header's json.Unmarshal.
	for k, t := range f.Tuples {
		t.State.sanitize()
		f.Tuples[k] = t
	}
	for k, l := range f.Lists {
		if l == nil {
			delete(f.Lists, k)
		}
	}
	return f, nil
}
