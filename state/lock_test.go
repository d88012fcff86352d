package state

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/go-kit/log"

	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// One process per --storage.path: a second lock on the directory (a
// second exporter) is refused with an error naming the directory and the
// pid holding it; once released, the directory can be taken again.
func TestOneProcessPerStorageDirectory(t *testing.T) {
	dir := t.TempDir()
	first, err := Open(dir, map[string]int{"data": 1}, log.NewNopLogger())
	if err != nil || first == nil {
		t.Fatalf("Open: %v, %v", first, err)
	}
	second, err := Open(dir, map[string]int{"data": 1}, log.NewNopLogger())
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

// Two processes: a second exporter's Open is refused with the pid of the
// one holding the directory, and once that one is killed (kill -9: no
// Close) the directory is free again, the kernel having dropped its lock.
func TestLockHeldByAnotherProcess(t *testing.T) {
	if dir := os.Getenv("STATE_LOCK_HELPER_DIR"); dir != "" {
		if _, err := LockDir(dir); err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println("locked")
		_, _ = io.ReadAll(os.Stdin) // held until killed
		os.Exit(0)
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockHeldByAnotherProcess$")
	cmd.Env = append(os.Environ(), "STATE_LOCK_HELPER_DIR="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "locked\n" {
		_ = cmd.Process.Kill()
		t.Fatalf("the other process: %q, %v", line, err)
	}
	_, err = Open(dir, map[string]int{"data": 1}, log.NewNopLogger())
	want := fmt.Sprintf("storage directory %s is in use by another process (pid %d)", dir, cmd.Process.Pid)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Open beside another process: %v; want %q", err, want)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	s, err := Open(dir, map[string]int{"data": 1}, log.NewNopLogger())
	if err != nil {
		t.Fatalf("after the other process was killed: %v", err)
	}
	s.Close()
}

// A directory that cannot be locked for another reason than a second
// process (here its path is a file: nothing can be created under it) is
// a warning, as a directory that cannot be written always was, not a
// failure to start.
func TestUnlockableDirectoryIsAWarning(t *testing.T) {
	path := t.TempDir() + "/file"
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	logs := &testtool.LogBuffer{}
	s, err := Open(path, map[string]int{"data": 1}, log.NewLogfmtLogger(logs))
	if err != nil || s == nil {
		t.Fatalf("Open: %v, %v", s, err)
	}
	if !strings.Contains(logs.String(), `msg="the storage directory cannot be locked"`) {
		t.Errorf("no warning:\n%s", logs)
	}
	if err := s.Close(); err != nil {
		t.Error(err)
	}
}
