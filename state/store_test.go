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
