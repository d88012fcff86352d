package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"

	"github.com/onchain-exporter/onchain_exporter/budget"
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/expand"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// Store keeps what the exporter learned across restarts, one file per API
// under a directory (DIR/data.json, ...): each tuple's last values and
// schedule, the publication delays learned, the API's pauses and the
// answers of its listing endpoints. A file applies only to an API section
// of the same account (upstream.Account: API, address, auth, credential; a new
// timeout, limit or TLS setting keeps it), and a tuple's entry only to a
// tuple of the same request and series (Digest). Nothing secret is
// written: the account is a salted, slow digest. A nil *Store keeps
// nothing.
type Store struct {
	dir      string
	logger   log.Logger
	writable bool
	now      func() time.Time
	lock     *DirLock // held by Open; nil from OpenStore

	// saving serialises whole saves (LockSaves): what written says is on
	// disk stays true when two saves meet.
	saving   sync.Mutex
	mu       sync.Mutex
	loaded   map[string]*File  // per API, until the exporter takes it
	restored map[string]bool   // APIs whose pauses were restored
	written  map[string][]byte // per API: what its file holds
	failed   map[string]string // per API: the last write error logged
	// cache holds the listing answers: those of the files at open, then
	// what expansion (package expand) reads; saves write from it.
	cache *expand.Cache
	// budgets are the reservation files read at open, per API, until
	// KeepBudget takes them; kept the budgets that write there.
	budgets map[string]*budgetFile
	kept    map[string]*budget.Budget
}

// Open takes dir for this process (LockDir: a second exporter on the same
// --storage.path gets an error naming the directory and the pid holding
// it) and reads the state files under it that cfg still asks for, within
// the bounds cfg sets (fileBound): the file of an API no longer
// configured is not read, nor one larger than its configuration writes,
// and each entry is checked (check.go). The lock is held until Close.
// Its only error is ErrInUse (wrapped): otherwise it never fails, as
// OpenStore; a directory that cannot be locked (a read-only file system)
// is a warning, and is then not written either. An empty dir returns nil
// and no error: nothing is kept.
func Open(dir string, cfg *config.Config, logger log.Logger) (*Store, error) {
	if dir == "" {
		return nil, nil
	}
	l, err := LockDir(dir)
	switch {
	case errors.Is(err, ErrInUse):
		return nil, err
	case err != nil:
		level.Warn(logger).Log("msg", "the storage directory cannot be locked", "path", dir, "err", err)
	}
	s := open(dir, cfg, logger, time.Now)
	s.lock = l
	return s, nil
}

// Close releases the directory's lock taken by Open; a nil Store, or one
// from OpenStore, has none.
func (s *Store) Close() error {
	if s == nil || s.lock == nil {
		return nil
	}
	return s.lock.Release()
}

// OpenStore reads the state files under dir, without a lock and with no
// configuration to bound them by but maxFile (tests, tools). It never
// fails: a directory that cannot be written is a warning and state is not
// kept; a file that cannot be read or decoded is a warning and a cold
// start of its API. An empty dir returns nil: nothing is kept.
func OpenStore(dir string, logger log.Logger) *Store {
	if dir == "" {
		return nil
	}
	return open(dir, nil, logger, time.Now)
}

func open(dir string, cfg *config.Config, logger log.Logger, now func() time.Time) *Store {
	s := &Store{dir: dir, logger: logger, now: now, loaded: map[string]*File{}, restored: map[string]bool{},
		written: map[string][]byte{}, failed: map[string]string{}, cache: expand.NewCache(),
		budgets: map[string]*budgetFile{}, kept: map[string]*budget.Budget{}}
	if err := s.probe(); err != nil {
		level.Warn(logger).Log("msg", "the storage directory cannot be written; state will not be kept across restarts", "path", dir, "err", err)
	} else {
		s.writable = true
	}
	for _, name := range config.APINames {
		var a *config.API
		if cfg != nil {
			if a = cfg.APIs[name]; a == nil {
				continue // not configured: its files are left as they are, unread
			}
		}
		s.readBudget(name)
		path := s.file(name)
		data, err := readFile(path, fileBound(a))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err == nil {
			var f *File
			if f, err = decodeFile(data, name); err == nil {
				warnDropped(logger, path, f.check(now()))
				s.cache.Restore(name, f.Account, f.Lists)
				f.Lists = nil // the cache holds them from now on
				s.loaded[name] = f
				level.Info(logger).Log("msg", "state loaded", "file", path, "bytes", len(data))
				continue
			}
		}
		level.Warn(logger).Log("msg", "state file ignored; its API starts cold", "file", path, "err", err)
	}
	return s
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

// Take hands the exporter the state of an API section once: nil when
// there is none, or when it was saved for another account (or the Store
// is nil). Only the entries of the section's tuples are read, each
// checked against its tuple (checkTuple); the entries of tuples no longer
// configured are dropped unread.
func (s *Store) Take(a *config.API, account string) *File {
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
	if f == nil {
		return nil
	}
	tuples := make(map[string]*config.Tuple, len(a.Tuples))
	for _, t := range a.Tuples {
		tuples[t.Key] = t
	}
	var skipped int
	var bad []problem
	f.Tuples, skipped, bad = f.tuples(func(key string) bool { return tuples[key] != nil })
	f.raw = nil
	now := s.now()
	for _, k := range slices.Sorted(maps.Keys(f.Tuples)) {
		st := f.Tuples[k]
		if msg := CheckTuple(&st.State, tuples[k], now); msg != "" {
			bad = append(bad, problem{"tuples." + k, msg})
			delete(f.Tuples, k)
		}
	}
	warnDropped(s.logger, s.file(a.Name), bad)
	if skipped > 0 {
		level.Info(s.logger).Log("msg", "state of tuples no longer configured dropped", "file", s.file(a.Name), "count", skipped)
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

// Lists returns the listing answers of an API for the file of account,
// from the Cache; nil for a nil Store.
func (s *Store) Lists(api, account string) map[string]*expand.Answer {
	if s == nil {
		return nil
	}
	return s.cache.Saved(api, account)
}

// LockSaves begins a whole save (the Files of every API, then Write):
// saves are serialised, so that what the Store knows to be on disk stays
// true when two saves meet. UnlockSaves ends it. Both do nothing on a
// nil Store.
func (s *Store) LockSaves() {
	if s != nil {
		s.saving.Lock()
	}
}

// UnlockSaves ends a save begun by LockSaves.
func (s *Store) UnlockSaves() {
	if s != nil {
		s.saving.Unlock()
	}
}

// Write replaces an API's file when its content changed: a temporary file
// in the directory, synced, renamed over the old one, so that a crash
// leaves either the old file or the new one. A failure is logged once.
// A nil Store, or one whose directory cannot be written, writes nothing.
func (s *Store) Write(api string, f *File) {
	if s == nil || !s.writable {
		return
	}
	f.writable()
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
