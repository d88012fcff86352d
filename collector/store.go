package collector

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"

	"github.com/onchain-exporter/onchain_exporter/budget"
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/decode"
	"github.com/onchain-exporter/onchain_exporter/expand"
	"github.com/onchain-exporter/onchain_exporter/schedule"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// stateVersion is the format of the state files; a file of another
// version is ignored (a cold start for its API).
const stateVersion = 3

// Store keeps what the exporter learned across restarts, one file per API
// under a directory (DIR/data.json, ...): each tuple's last values and
// schedule, the publication delays learned, the API's pauses and the
// answers of its listing endpoints. A file applies only to an API section
// of the same account (upstream.Account: API, address, auth, credential; a new
// timeout, limit or TLS setting keeps it), and a tuple's entry only to a
// tuple of the same request and series (tupleDigest). Nothing secret is
// written: the account is a salted, slow digest. A nil *Store keeps
// nothing.
type Store struct {
	dir      string
	logger   log.Logger
	writable bool

	// saving serialises whole saves: what written says is on disk stays
	// true when two saves meet.
	saving   sync.Mutex
	mu       sync.Mutex
	loaded   map[string]*stateFile // per API, until the exporter takes it
	restored map[string]bool       // APIs whose pauses were restored
	written  map[string][]byte     // per API: what its file holds
	failed   map[string]string     // per API: the last write error logged
	// cache holds the listing answers: those of the files at open, then
	// what expansion (package expand) reads; saves write from it.
	cache *expand.Cache
}

// stateFile is the content of one API's file.
type stateFile struct {
	Version int                          `json:"version"`
	API     string                       `json:"api"`
	Account string                       `json:"account"` // upstream.Account: a digest
	Tuples  map[string]savedTuple        `json:"tuples,omitempty"`
	Delays  map[string]schedule.Estimate `json:"delays,omitempty"`
	Pauses  []upstream.Pause             `json:"pauses,omitempty"`
	Lists   map[string]*savedList        `json:"lists,omitempty"`
	// Budget is the day's count of calls against daily_budget.
	Budget *budget.Saved `json:"budget,omitempty"`
}

// savedTuple is a tuple's cache under the digest of the tuple it belongs
// to: a tuple whose request or series changed does not take it.
type savedTuple struct {
	Digest string     `json:"digest"`
	State  tupleCache `json:"state"`
}

// savedList is the last answer of a listing endpoint, as a file holds
// it; in memory, the Cache of package expand holds it.
type savedList = expand.Answer

// OpenStore reads the state files under dir. It never fails: a directory
// that cannot be written is a warning and state is not kept; a file that
// cannot be read or decoded is a warning and a cold start of its API. An
// empty dir returns nil: nothing is kept.
func OpenStore(dir string, logger log.Logger) *Store {
	if dir == "" {
		return nil
	}
	s := &Store{dir: dir, logger: logger, loaded: map[string]*stateFile{}, restored: map[string]bool{},
		written: map[string][]byte{}, failed: map[string]string{}, cache: expand.NewCache()}
	if err := s.probe(); err != nil {
		level.Warn(logger).Log("msg", "the storage directory cannot be written; state will not be kept across restarts", "path", dir, "err", err)
	} else {
		s.writable = true
	}
	for _, name := range config.APINames {
		path := s.file(name)
		data, err := readStateFile(path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err == nil {
			var f *stateFile
			if f, err = decodeStateFile(data, name); err == nil {
				s.cache.Restore(name, f.Account, f.Lists)
				f.Lists = nil // the cache holds them from now on
				s.loaded[name] = f
				level.Info(logger).Log("msg", "state loaded", "file", path, "tuples", len(f.Tuples))
				continue
			}
		}
		level.Warn(logger).Log("msg", "state file ignored; its API starts cold", "file", path, "err", err)
	}
	return s
}

// maxStateFile bounds what a state file may hold: far more than any
// configuration max_tuples allows writes.
const maxStateFile = 256 << 20

// readStateFile reads a state file that is a regular file of a sane
// size: a FIFO, a device or a directory under its name is not read
// (a FIFO would hang the start), nor a file larger than maxStateFile.
func readStateFile(path string) ([]byte, error) {
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
	if fi.Size() > maxStateFile {
		return nil, fmt.Errorf("%d bytes, more than a state file holds (%d MiB)", fi.Size(), maxStateFile>>20)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxStateFile+1))
	if err == nil && len(data) > maxStateFile {
		err = fmt.Errorf("more than a state file holds (%d MiB)", maxStateFile>>20)
	}
	return data, err
}

func (s *Store) file(api string) string { return filepath.Join(s.dir, api+".json") }

// probe creates the directory if needed, removes temporary files a crash
// left behind and checks that a file can be created there.
func (s *Store) probe() error {
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return err
	}
	if old, _ := filepath.Glob(filepath.Join(s.dir, ".*.json.tmp*")); len(old) > 0 {
		for _, p := range old {
			_ = os.Remove(p)
		}
		level.Debug(s.logger).Log("msg", "removed temporary state files left by an interrupted write", "count", len(old))
	}
	f, err := os.CreateTemp(s.dir, ".probe.json.tmp*")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}

// decodeStateFile reads one API's file; any problem is an error naming it.
func decodeStateFile(data []byte, api string) (*stateFile, error) {
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
	if head.Version != stateVersion {
		return nil, fmt.Errorf("format version %d, this exporter reads version %d", head.Version, stateVersion)
	}
	if head.API != api {
		return nil, fmt.Errorf("the file holds the state of API %q, not %q", head.API, api)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // listing rows read as upstream.List reads them
	f := &stateFile{}
	if err := dec.Decode(f); err != nil {
		return nil, fmt.Errorf("corrupt state: %s", decode.ShortJSONError(err))
	}
	if dec.More() {
		return nil, errors.New("corrupt state: data after the end")
	}
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

// take hands the exporter the state of an API section once: nil when
// there is none, or when it was saved for another account.
func (s *Store) take(a *config.API, account string) *stateFile {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.loaded[a.Name]
	delete(s.loaded, a.Name)
	if f != nil && (f.Account == "" || f.Account != account) {
		level.Warn(s.logger).Log("msg", "state file ignored: the API's address, auth or credential changed since it was saved", "file", s.file(a.Name))
		return nil
	}
	return f
}

// RestorePauses applies the saved pauses of a client's API, once, when the
// client is of the account they were saved for.
func (s *Store) RestorePauses(c *upstream.Client) {
	if s == nil {
		return
	}
	name := c.API().Name
	s.mu.Lock()
	f, done := s.loaded[name], s.restored[name]
	s.restored[name] = true
	s.mu.Unlock()
	if !done && f != nil && f.Account != "" && f.Account == c.Account() {
		c.RestorePauses(f.Pauses)
	}
}

// Cache returns the cache of listing answers the Store saves, for the
// Expander (expand.Store); nil for a nil Store.
func (s *Store) Cache() *expand.Cache {
	if s == nil {
		return nil
	}
	return s.cache
}

// listsOf returns the listing answers of an API for the file of account.
func (s *Store) listsOf(api, account string) map[string]*savedList {
	return s.cache.Saved(api, account)
}

// write replaces an API's file when its content changed: a temporary file
// in the directory, synced, renamed over the old one, so that a crash
// leaves either the old file or the new one. A failure is logged once.
func (s *Store) write(api string, f *stateFile) {
	if s == nil || !s.writable {
		return
	}
	data, err := json.Marshal(f)
	if err == nil {
		s.mu.Lock()
		same := bytes.Equal(s.written[api], data)
		s.mu.Unlock()
		if same {
			return
		}
		err = writeAtomic(s.dir, s.file(api), data)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		if s.failed[api] != err.Error() {
			s.failed[api] = err.Error()
			level.Warn(s.logger).Log("msg", "cannot save state", "file", s.file(api), "err", err)
		}
		return
	}
	s.written[api], s.failed[api] = data, ""
}

func writeAtomic(dir, path string, data []byte) error {
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	defer os.Remove(name) // after a successful rename there is nothing to remove
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(name, path); err != nil {
		return err
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // the rename itself is durable once the directory is
		d.Close()
	}
	return nil
}
