package state

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-kit/log"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/expand"
	"github.com/onchain-exporter/onchain_exporter/internal/testtool"
	"github.com/onchain-exporter/onchain_exporter/schedule"
)

// FuzzStateDecode: whatever a file holds, Decode either refuses it or
// returns what the exporter may use: counters not negative, no null
// listing answer, delays the Book takes, and a File that writes and reads
// back. (What the collector does with a decoded tuple is fuzzed in
// package collector: FuzzRestoredState.)
func FuzzStateDecode(f *testing.F) {
	f.Add([]byte(`{"version":3,"api":"data","account":"x","tuples":{"k":{"digest":"d","state":{"samples":[{"field":{"Name":"a","Scale":1},"names":["l"],"values":["v"],"value":"+Inf"}],"polls":-3,"failures":-1}}},"delays":{"k":{"first":1,"depth":-5}},"lists":{"/p":null,"/q":{"rows":[{"a":1}]}}}`))
	f.Add([]byte(`{"version":3,"api":"data"}`))
	f.Add([]byte(`{"version":1}`))
	f.Add([]byte(``))
	f.Fuzz(func(t *testing.T, data []byte) {
		sf, err := Decode(data, "data")
		if err != nil {
			return
		}
		for k, saved := range sf.Tuples {
			if saved.State.Failures < 0 || saved.State.Polls < 0 {
				t.Errorf("tuple %q: failures %d, polls %d after decoding", k, saved.State.Failures, saved.State.Polls)
			}
		}
		for k, l := range sf.Lists {
			if l == nil {
				t.Errorf("listing answer %q is null after decoding", k)
			}
		}
		b := schedule.NewBook(nil)
		b.Restore(sf.Delays)
		b.Snapshot()
		again, err := json.Marshal(sf)
		if err != nil {
			t.Fatalf("a decoded file does not encode: %v", err)
		}
		back, err := Decode(again, "data")
		if err != nil {
			t.Fatalf("a decoded file, written again, does not decode: %v\n%s", err, again)
		}
		if len(back.Tuples) != len(sf.Tuples) || len(back.Lists) != len(sf.Lists) {
			t.Errorf("written again: %d tuples and %d lists, were %d and %d", len(back.Tuples), len(back.Lists), len(sf.Tuples), len(sf.Lists))
		}
	})
}

// TestStateFileThatIsNotAFileIsIgnored: a FIFO (or directory) named like a
// state file is not read: the start does not hang on it, and its API
// starts cold with a warning naming it.
func TestStateFileThatIsNotAFileIsIgnored(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "data.json"), 0o600); err != nil {
		t.Fatalf("cannot make a FIFO: %v", err)
	}
	if err := os.Mkdir(filepath.Join(dir, "indicator.json"), 0o700); err != nil {
		t.Fatal(err)
	}
	logs := &testtool.LogBuffer{}
	done := make(chan *Store)
	go func() { done <- OpenStore(dir, log.NewLogfmtLogger(logs)) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("OpenStore still reading a FIFO after a minute")
	}
	for _, want := range []string{"data.json", "is a named pipe", "indicator.json", "is a directory"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log does not say %q:\n%s", want, logs)
		}
	}
}

// A file is handed over once, to an API section of the account it was
// saved for; its listing answers go to the Cache, for that account.
func TestTakeOnceForTheSameAccount(t *testing.T) {
	dir := t.TempDir()
	s := OpenStore(dir, log.NewNopLogger())
	f := NewFile(config.APIData, "acct")
	f.Put(hourTuple("k"), Tuple{OK: true})
	f.Lists = map[string]*expand.Answer{"/p": {Rows: []map[string]any{{"a": "b"}}, At: now}}
	s.Write(config.APIData, f)

	logs := &testtool.LogBuffer{}
	other := OpenStore(dir, log.NewLogfmtLogger(logs))
	if got := other.Take(&config.API{Name: config.APIData}, "another"); got != nil {
		t.Errorf("another account took the file: %+v", got)
	}
	if !strings.Contains(logs.String(), "address, auth or credential changed") || !strings.Contains(logs.String(), filepath.Join(dir, "data.json")) {
		t.Errorf("no warning naming the file of another account:\n%s", logs)
	}
	if l := other.Lists(config.APIData, "another"); l != nil {
		t.Errorf("another account's file has the listing answers %v", l)
	}

	same := OpenStore(dir, log.NewNopLogger())
	if l := same.Lists(config.APIData, "acct"); l["/p"] == nil || !l["/p"].At.Equal(now) {
		t.Errorf("listing answers of the account after a restart: %v", l)
	}
	got := same.Take(&config.API{Name: config.APIData, Tuples: []*config.Tuple{hourTuple("k")}}, "acct")
	if got == nil {
		t.Fatal("the file was not handed over to its account")
	}
	if s, ok := got.Tuple(hourTuple("k"), now); !ok || !s.OK {
		t.Errorf("the saved tuple: %+v, %v", s, ok)
	}
	if got.Lists != nil {
		t.Errorf("the file handed over still holds its lists (the Cache holds them): %v", got.Lists)
	}
	if again := same.Take(&config.API{Name: config.APIData}, "acct"); again != nil {
		t.Error("the file was handed over twice")
	}
	if none := same.Take(&config.API{Name: config.APIIndicator}, "acct"); none != nil {
		t.Error("an API without a file was handed one")
	}
}

// Write writes a file whole, and only when its content changed.
func TestWriteWhenChanged(t *testing.T) {
	dir := t.TempDir()
	s := OpenStore(dir, log.NewNopLogger())
	path := filepath.Join(dir, "data.json")
	f := NewFile(config.APIData, "acct")
	f.Put(hourTuple("k"), Tuple{Failures: 1})
	s.Write(config.APIData, f)
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	s.Write(config.APIData, f)
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("an unchanged file was written again: %v", err)
	}
	f.Put(hourTuple("k"), Tuple{Failures: 2})
	s.Write(config.APIData, f)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode(data, config.APIData)
	if err != nil || back.Tuples["k"].State.Failures != 2 {
		t.Errorf("the changed file reads back as %+v, %v", back, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("files after writing: %v; want data.json alone", entries)
	}
}

// A file larger than any configuration writes is not read.
func TestOversizedFileIsIgnored(t *testing.T) {
	dir := t.TempDir()
	big, err := os.Create(filepath.Join(dir, "data.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := big.Truncate(maxFile + 1); err != nil { // sparse: nothing is written
		t.Fatal(err)
	}
	big.Close()
	logs := &testtool.LogBuffer{}
	s := OpenStore(dir, log.NewLogfmtLogger(logs))
	if !strings.Contains(logs.String(), "more than a state file holds") {
		t.Errorf("no warning about the size:\n%s", logs)
	}
	if f := s.Take(&config.API{Name: config.APIData}, ""); f != nil {
		t.Errorf("an oversized file was handed over: %+v", f)
	}
}

// A nil Store keeps nothing, and every method accepts it.
func TestNilStoreKeepsNothing(t *testing.T) {
	if s := OpenStore("", log.NewNopLogger()); s != nil {
		t.Fatalf("OpenStore without a directory: %v", s)
	}
	var s *Store
	s.LockSaves()
	s.Write(config.APIData, NewFile(config.APIData, "acct"))
	s.UnlockSaves()
	s.RestorePauses(nil)
	if f := s.Take(&config.API{Name: config.APIData}, "acct"); f != nil {
		t.Errorf("Take: %v", f)
	}
	if l := s.Lists(config.APIData, "acct"); l != nil {
		t.Errorf("Lists: %v", l)
	}
	if c := s.Cache(); c != nil {
		t.Errorf("Cache: %v", c)
	}
}
