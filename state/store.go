package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
)

// Store keeps what the exporter learned across restarts, one file per API
// under a directory (DIR/data.json, ...), each holding the snapshots its
// owners gave (File). A file applies only to an API section of the same
// account (a digest the caller gives: nothing secret is written), and
// each part of it is handed back once. A nil *Store keeps nothing.
type Store struct {
	dir      string
	logger   log.Logger
	writable bool
	lock     *DirLock // held by Open; nil from OpenStore

	// saving serialises whole saves (LockSaves): what written says is on
	// disk stays true when two saves meet.
	saving   sync.Mutex
	mu       sync.Mutex
	loaded   map[string]*File  // per API, until the exporter takes it
	restored map[string]bool   // APIs whose pauses were handed back
	written  map[string][]byte // per API: what its file holds
	failed   map[string]string // per API: the last write error logged
	// budgets are the reservation files read at open, per API, until
	// TakeReservation hands them back.
	budgets map[string]*budgetFile
}

// Open takes dir for this process (LockDir: a second exporter on the same
// --storage.path gets an error naming the directory and the pid holding
// it) and reads the state files of the API sections in apis, each within
// the bound its count of tuples sets (apis maps an API's name to the most
// tuples its configuration may hold: max_tuples, or more when listed):
// the file of an API no longer configured is not read, nor one larger
// than its configuration writes. The lock is held until Close. Its only
// error is ErrInUse (wrapped): otherwise it never fails, as OpenStore; a
// directory that cannot be locked (a read-only file system) is a warning,
// and is then not written either. An empty dir returns nil and no error:
// nothing is kept.
func Open(dir string, apis map[string]int, logger log.Logger) (*Store, error) {
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
	if apis == nil {
		apis = map[string]int{}
	}
	s := open(dir, apis, logger)
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

// OpenStore reads every state file under dir (DIR/API.json), without a
// lock and with no configuration to bound them by but maxFile (tests,
// tools). It never fails: a directory that cannot be written is a
// warning and state is not kept; a file that cannot be read or decoded is
// a warning and a cold start of its API. An empty dir returns nil:
// nothing is kept.
func OpenStore(dir string, logger log.Logger) *Store {
	if dir == "" {
		return nil
	}
	return open(dir, nil, logger)
}

// open reads the files of the APIs in apis, or with apis nil of every API
// a file is named for.
func open(dir string, apis map[string]int, logger log.Logger) *Store {
	s := &Store{dir: dir, logger: logger, loaded: map[string]*File{}, restored: map[string]bool{},
		written: map[string][]byte{}, failed: map[string]string{}, budgets: map[string]*budgetFile{}}
	if err := s.probe(); err != nil {
		level.Warn(logger).Log("msg", "the storage directory cannot be written; state will not be kept across restarts", "path", dir, "err", err)
	} else {
		s.writable = true
	}
	names := slices.Sorted(maps.Keys(apis))
	if apis == nil {
		names = filesUnder(dir)
	}
	for _, name := range names {
		n, ok := apis[name]
		if !ok {
			n = -1 // no configuration: bounded by maxFile only
		}
		s.readBudget(name)
		path := s.file(name)
		data, err := readFile(path, fileBound(n))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err == nil {
			var f *File
			if f, err = decodeFile(data, name); err == nil {
				s.loaded[name] = f
				level.Info(logger).Log("msg", "state loaded", "file", path, "bytes", len(data))
				continue
			}
		}
		level.Warn(logger).Log("msg", "state file ignored; its API starts cold", "file", path, "err", err)
	}
	return s
}

// filesUnder lists the APIs whose state or reservation file is under dir.
func filesUnder(dir string) []string {
	entries, _ := os.ReadDir(dir)
	seen := map[string]bool{}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || name == "" || strings.HasPrefix(name, ".") {
			continue
		}
		name = strings.TrimPrefix(name, "budget-")
		seen[name] = true
	}
	return slices.Sorted(maps.Keys(seen))
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

// Take hands back the file of an API section once: nil when there is
// none, or when it was saved for another account (or the Store is nil).
// Only the entries of the tuples keep asks for are read; the others are
// dropped unread (an info line counts them). Its pauses and listing
// answers are not in it: Pauses and Lists hand those back.
func (s *Store) Take(api, account string, keep func(key string) bool) *File {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.loaded[api]
	delete(s.loaded, api)
	if f == nil {
		return nil
	}
	if f.Account == "" || f.Account != account {
		level.Warn(s.logger).Log("msg", "state file ignored: the API's address, auth or credential changed since it was saved", "file", s.file(api))
		return nil
	}
	var skipped int
	f.Tuples, skipped = f.tuples(keep)
	f.raw, f.Pauses, f.Lists = nil, nil, nil
	if skipped > 0 {
		level.Info(s.logger).Log("msg", "state of tuples no longer configured dropped", "file", s.file(api), "count", skipped)
	}
	return f
}

// Pauses hands back the pauses saved in an API's file, once, when the
// file is of account; else nil.
func (s *Store) Pauses(api, account string) json.RawMessage {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	f, done := s.loaded[api], s.restored[api]
	s.restored[api] = true
	if done || f == nil || f.Account == "" || f.Account != account {
		return nil
	}
	return f.Pauses
}

// Lists hands back the listing answers saved in an API's file and the
// account they were read for, once; nil when there are none.
func (s *Store) Lists(api string) (account string, lists json.RawMessage) {
	if s == nil {
		return "", nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.loaded[api]
	if f == nil {
		return "", nil
	}
	lists, f.Lists = f.Lists, nil
	return f.Account, lists
}

// Problem is an entry of a file that its owner did not take back, and
// why: Entry names it as the file does (tuples.KEY, delays.KEY, budget).
type Problem struct{ Entry, Err string }

// maxWarnings is how many dropped entries of one file are named one by
// one; the rest are counted in one more line.
const maxWarnings = 10

// Dropped logs the entries of an API's file that were not taken back,
// naming the file and each entry.
func (s *Store) Dropped(api string, bad []Problem) {
	if s == nil {
		return
	}
	for i, p := range bad {
		if i == maxWarnings {
			level.Warn(s.logger).Log("msg", "more state entries dropped", "file", s.file(api), "count", len(bad)-maxWarnings)
			return
		}
		level.Warn(s.logger).Log("msg", "state entry dropped: not what the exporter writes", "file", s.file(api), "entry", p.Entry, "err", p.Err)
	}
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
