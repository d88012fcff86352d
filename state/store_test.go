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

	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// FuzzStateDecode: whatever a file holds, Decode either refuses it or
// returns a File that writes and reads back the same: no part null, the
// same tuples' entries. (What the owners do with the parts is fuzzed in
// package collector: FuzzLoadState, FuzzRestoredState.)
func FuzzStateDecode(f *testing.F) {
	f.Add([]byte(`{"version":3,"api":"data","account":"x","tuples":{"k":{"digest":"d","state":{"samples":[{"field":{"Name":"a","Scale":1},"names":["l"],"values":["v"],"value":"+Inf"}],"polls":-3,"failures":-1}}},"delays":{"k":{"first":1,"depth":-5}},"lists":{"/p":null,"/q":{"rows":[{"a":1}]}}}`))
	f.Add([]byte(`{"version":3,"api":"data","tuples":null,"pauses":null}`))
	f.Add([]byte(`{"version":1}`))
	f.Add([]byte(``))
	f.Fuzz(func(t *testing.T, data []byte) {
		sf, err := Decode(data, "data")
		if err != nil {
			return
		}
		for name, part := range map[string]json.RawMessage{"delays": sf.Delays, "pauses": sf.Pauses, "lists": sf.Lists, "budget": sf.Budget} {
			if string(part) == "null" {
				t.Errorf("%s is null after decoding", name)
			}
		}
		again, err := json.Marshal(sf)
		if err != nil {
			t.Fatalf("a decoded file does not encode: %v", err)
		}
		back, err := Decode(again, "data")
		if err != nil {
			t.Fatalf("a decoded file, written again, does not decode: %v\n%s", err, again)
		}
		if len(back.Tuples) != len(sf.Tuples) {
			t.Errorf("written again: %d tuples, were %d", len(back.Tuples), len(sf.Tuples))
		}
		for k, e := range sf.Tuples {
			var a, b any
			if json.Unmarshal(e, &a) != nil || json.Unmarshal(back.Tuples[k], &b) != nil {
				t.Errorf("tuple %q: not JSON after a round trip", k)
			}
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

// A file's parts are handed back once each, to an API section of the
// account it was saved for: the tuples asked for with its learned delays
// and day's count (Take), its pauses (Pauses), its listing answers with
// their account (Lists).
func TestTakeOnceForTheSameAccount(t *testing.T) {
	dir := t.TempDir()
	OpenStore(dir, log.NewNopLogger()).Write("data", sampleFile())

	logs := &testtool.LogBuffer{}
	other := OpenStore(dir, log.NewLogfmtLogger(logs))
	if p := other.Pauses("data", "another"); p != nil {
		t.Errorf("another account has the pauses %s", p)
	}
	if got := other.Take("data", "another", nil); got != nil {
		t.Errorf("another account took the file: %+v", got)
	}
	if !strings.Contains(logs.String(), "address, auth or credential changed") || !strings.Contains(logs.String(), filepath.Join(dir, "data.json")) {
		t.Errorf("no warning naming the file of another account:\n%s", logs)
	}

	same := OpenStore(dir, log.NewNopLogger())
	if account, l := same.Lists("data"); account != "acct" || !strings.Contains(string(l), `"/p"`) {
		t.Errorf("listing answers after a restart: %q, %s", account, l)
	}
	if _, l := same.Lists("data"); l != nil {
		t.Errorf("listing answers handed back twice: %s", l)
	}
	if p := same.Pauses("data", "acct"); !strings.Contains(string(p), "until") {
		t.Errorf("pauses of the account: %s", p)
	}
	if p := same.Pauses("data", "acct"); p != nil {
		t.Errorf("pauses handed back twice: %s", p)
	}
	got := same.Take("data", "acct", func(key string) bool { return key == "k" })
	if got == nil {
		t.Fatal("the file was not handed over to its account")
	}
	if len(got.Tuples) != 1 || !strings.Contains(string(got.Tuples["k"]), `"polls":2`) || got.Delays == nil || got.Budget == nil {
		t.Errorf("handed over: tuples %v, delays %s, budget %s", got.Tuples, got.Delays, got.Budget)
	}
	if got.Lists != nil || got.Pauses != nil {
		t.Errorf("the file handed over still holds its lists or pauses (handed back apart): %s, %s", got.Lists, got.Pauses)
	}
	if again := same.Take("data", "acct", nil); again != nil {
		t.Error("the file was handed over twice")
	}
	if none := same.Take("indicator", "acct", nil); none != nil {
		t.Error("an API without a file was handed one")
	}
}

// Write writes a file whole, and only when its content changed.
func TestWriteWhenChanged(t *testing.T) {
	dir := t.TempDir()
	s := OpenStore(dir, log.NewNopLogger())
	path := filepath.Join(dir, "data.json")
	f := NewFile("data", "acct")
	f.Tuples["k"] = json.RawMessage(`{"state":{"failures":1}}`)
	s.Write("data", f)
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	s.Write("data", f)
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("an unchanged file was written again: %v", err)
	}
	f.Tuples["k"] = json.RawMessage(`{"state":{"failures":2}}`)
	s.Write("data", f)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode(data, "data")
	if err != nil || string(back.Tuples["k"]) != `{"state":{"failures":2}}` {
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
	if f := s.Take("data", "", nil); f != nil {
		t.Errorf("an oversized file was handed over: %+v", f)
	}
}

// A nil Store keeps nothing, and every method accepts it.
func TestNilStoreKeepsNothing(t *testing.T) {
	if s := OpenStore("", log.NewNopLogger()); s != nil {
		t.Fatalf("OpenStore without a directory: %v", s)
	}
	if s, err := Open("", map[string]int{"data": 1}, log.NewNopLogger()); s != nil || err != nil {
		t.Fatalf("Open without a directory: %v, %v", s, err)
	}
	var s *Store
	s.LockSaves()
	s.Write("data", NewFile("data", "acct"))
	s.UnlockSaves()
	s.Dropped("data", []Problem{{"x", "y"}})
	s.ReservationIgnored("data", os.ErrInvalid)
	if f := s.Take("data", "acct", nil); f != nil {
		t.Errorf("Take: %v", f)
	}
	if p := s.Pauses("data", "acct"); p != nil {
		t.Errorf("Pauses: %s", p)
	}
	if _, l := s.Lists("data"); l != nil {
		t.Errorf("Lists: %s", l)
	}
	if r := s.TakeReservation("data", "acct"); r != nil || s.Keeps() {
		t.Errorf("TakeReservation: %s, Keeps %v", r, s.Keeps())
	}
	if err := s.Reserve("data", "acct", json.RawMessage(`{}`)); err == nil {
		t.Error("a nil Store reserved calls")
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}
