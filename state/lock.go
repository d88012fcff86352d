package state

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// lockName is the file one process at a time flocks, its pid in it.
const lockName = ".lock"

// ErrInUse is the error of LockDir (wrapped) when another process holds
// the directory.
var ErrInUse = errors.New("in use by another process")

// DirLock is a storage directory held by this process: two exporters on
// one --storage.path would each spend the daily budget and overwrite each
// other's files. The kernel's lock ends with the process however it ends.
type DirLock struct {
	f *os.File
}

// LockDir takes dir (created if needed) for this process; when another
// holds it, the error names the directory and, if known, its pid.
func LockDir(dir string) (*DirLock, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("storage directory %s: %w", dir, err)
	}
	path := filepath.Join(dir, lockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("storage directory %s cannot be locked: %w", dir, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			holder := ""
			if b, _ := os.ReadFile(path); len(b) > 0 && len(b) < 32 {
				if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
					holder = fmt.Sprintf(" (pid %d)", pid)
				}
			}
			return nil, fmt.Errorf("storage directory %s is %w%s: one exporter per --storage.path, or each would spend the daily budget on its own", dir, ErrInUse, holder)
		}
		return nil, fmt.Errorf("storage directory %s cannot be locked: %w", dir, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &DirLock{f: f}, nil
}

// Release lets the directory go; the lock file stays (removing it would
// let a third process lock a new file while a second waits on the old).
func (l *DirLock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := unix.Flock(int(l.f.Fd()), unix.LOCK_UN)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	return err
}
