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

// Store keeps one File per API under a directory (DIR/data.json, ...). A
// file applies only to a section of the same account (a digest the
// caller gives: nothing secret is written), and each part of it is handed
// back once. A nil *Store keeps nothing.
type Store struct {
	dir      string
	logger   log.Logger
	writable bool
	lock     *DirLock // held by Open; nil from OpenStore

	saving   sync.Mutex // LockSaves
	mu       sync.Mutex
	loaded   map[string]*File       // per API, until the exporter takes it
	restored map[string]bool        // APIs whose pauses were handed back
	written  map[string][]byte      // per API: what its file holds
	failed   map[string]string      // per API: the last write error logged
	budgets  map[string]*budgetFile // per API, until TakeReservation
}

// Open takes dir for this process (LockDir) until Close and reads the
// files of the API sections in apis, each within fileBound of its most
// tuples (apis maps an API's name to them); the file of an API not in apis
// is not read. Its only error is ErrInUse (wrapped): a directory that
// cannot be locked (a read-only file system) is a warning, as OpenStore's.
// An empty dir returns nil and no error: nothing is kept.
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
	s := open(dir, apis, logger)
	s.lock = l
	return s, nil
}

// Close releases the directory's lock taken by Open, if any.
func (s *Store) Close() error {
	if s == nil || s.lock == nil {
		return nil
	}
	return s.lock.Release()
}

// OpenStore reads every state file under dir, without a lock and bounded
// by maxFile alone (tests, tools). It never fails: a directory that
// cannot be written is a warning and nothing is kept; a file that cannot
// be read is a warning and a cold start of its API. An empty dir: nil.
func OpenStore(dir string, logger log.Logger) *Store {
	if dir == "" {
		return nil
	}
	return open(dir, filesUnder(dir), logger)
}

// open reads the files of the APIs in apis, each within fileBound of its
// count.
func open(dir string, apis map[string]int, logger log.Logger) *Store {
	s := &Store{dir: dir, logger: logger, loaded: map[string]*File{}, restored: map[string]bool{},
		written: map[string][]byte{}, failed: map[string]string{}, budgets: map[string]*budgetFile{}}
	if err := s.probe(); err != nil {
		level.Warn(logger).Log("msg", "the storage directory cannot be written; state will not be kept across restarts", "path", dir, "err", err)
	} else {
		s.writable = true
	}
	for _, name := range slices.Sorted(maps.Keys(apis)) {
		s.readBudget(name)
		path := s.file(name)
		data, err := readFile(path, fileBound(apis[name]))
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

// filesUnder maps the APIs whose state or reservation file is under dir
// to -1: no configuration, bounded by maxFile only.
func filesUnder(dir string) map[string]int {
	entries, _ := os.ReadDir(dir)
	apis := map[string]int{}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || name == "" || strings.HasPrefix(name, ".") {
			continue
		}
		apis[strings.TrimPrefix(name, "budget-")] = -1
	}
	return apis
}

func (s *Store) file(api string) string { return filepath.Join(s.dir, api+".json") }

// probe creates the directory, removes temporary files a crash left and
// checks that a file can be created there.
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

// Take hands back the file of an API section once, nil when there is
// none or it was saved for another account. Only the tuples keep asks for
// are read; the others are dropped unread (an info line counts them).
// Pauses and Lists hand back the rest.
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

// Pauses hands back the pauses of an API's file once, when the file is
// of account; else nil.
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

// maxWarnings is how many dropped entries of a file are named; one more
// line counts the rest.
const maxWarnings = 10

// Dropped logs the entries of an API's file its owners refused.
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

// LockSaves begins a whole save (every API's Write): saves are
// serialised, so that what the Store knows is on disk stays true when
// two saves meet.
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

// Write replaces an API's file when its content changed, by a synced
// temporary file renamed over it: a crash leaves the old or the new. A
// failure is logged once per error text.
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
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(name, path)
	}
	if err != nil {
		return err
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // the rename itself is durable once the directory is
		d.Close()
	}
	return nil
}
