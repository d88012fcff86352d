package state

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/go-kit/log"
)

// One process per --storage.path: a second lock on the directory (a
// second exporter) is refused with an error naming the directory and the
// pid holding it; once released, the directory can be taken again.
func TestOneProcessPerStorageDirectory(t *testing.T) {
	dir := t.TempDir()
	first, err := Open(dir, checkConfig("k"), log.NewNopLogger())
	if err != nil || first == nil {
		t.Fatalf("Open: %v, %v", first, err)
	}
	second, err := Open(dir, checkConfig("k"), log.NewNopLogger())
	want := fmt.Sprintf("storage directory %s is in use by another process (pid %d): one exporter per --storage.path", dir, os.Getpid())
	if second != nil || err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("a second Open: %v, %v; want the error %q", second, err, want)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := LockDir(dir)
	if err != nil {
		t.Fatalf("after Close: %v", err)
	}
	if err := again.Release(); err != nil {
		t.Fatal(err)
	}
	if s, err := Open("", nil, log.NewNopLogger()); s != nil || err != nil {
		t.Errorf("Open without a directory: %v, %v", s, err)
	}
	var none *Store
	if err := none.Close(); err != nil {
		t.Errorf("Close of a nil Store: %v", err)
	}
}

// A lock file that names no pid (written by something else) still
// refuses, without one.
func TestLockWithoutPid(t *testing.T) {
	dir := t.TempDir()
	l, err := LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if err := os.WriteFile(dir+"/"+lockName, []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = LockDir(dir)
	if err == nil || !strings.Contains(err.Error(), "is in use by another process: one exporter") {
		t.Errorf("second lock: %v", err)
	}
}
