package persist

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"

	"github.com/onchain-exporter/onchain_exporter/budget"
	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/testtool"
)

// process is one start of an exporter at `at` on dir: its Store and its
// data API's budget of limit calls a day, kept by the Store.
func process(t *testing.T, dir string, limit int, at time.Time, account string) (*Store, *budget.Budget) {
	t.Helper()
	s := storeAt(dir, at, log.NewNopLogger())
	b := budget.New(limit, at)
	s.keepBudget(config.APIData, account, b)
	return s, b
}

// The crash loop of issue 26 with real files: 100 processes, each
// started from what the last left on disk, making its first call and
// killed a second later without a save. The day's count reaches disk
// before each call, so they spend what one process would have: with
// daily_budget 96, one call (the pacing allows one in 100 s; without the
// reservation file, 100 calls); with 960, the bucket's 10 and the 1.1
// refilled in 100 s.
func TestCrashLoopSpendsNoMoreThanOneProcess(t *testing.T) {
	for _, tc := range []struct{ limit, greedy, want int }{{96, 1, 1}, {960, 1, 11}, {960, 100, 11}} {
		dir := t.TempDir()
		at := savedAt
		spent := 0
		for range 100 {
			_, b := process(t, dir, tc.limit, at, "acct")
			for range tc.greedy {
				if ok, _ := b.Take(at); ok {
					spent++
				}
			}
			at = at.Add(time.Second) // killed: no save, no Close
		}
		if spent > tc.want {
			t.Errorf("daily_budget %d, %d call(s) per process: 100 restarts in 100 s spent %d calls, pacing allows %d", tc.limit, tc.greedy, spent, tc.want)
		}
		t.Logf("daily_budget %d, up to %d call(s) per process: 100 restarts in 100 s spent %d calls", tc.limit, tc.greedy, spent)
	}
}

// A restart restores what was reserved (not what was used), for the same
// account only; a budget already kept is not restored twice.
func TestKeepBudgetRestoresTheReservation(t *testing.T) {
	dir := t.TempDir()
	s, b := process(t, dir, 86400, savedAt, "acct")
	for range 4 {
		if ok, _ := b.Take(savedAt); !ok {
			t.Fatal("refused")
		}
	}
	// Chunks of 1, 2, 4: seven calls reserved for four made.
	var onDisk struct {
		API, Account string
		Budget       budget.Saved
	}
	data, err := os.ReadFile(filepath.Join(dir, "budget-data.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &onDisk); err != nil || onDisk.Budget.Used != 7 || onDisk.Account != "acct" || onDisk.API != "data" {
		t.Fatalf("reservation file %s (%v)", data, err)
	}
	s.keepBudget(config.APIData, "acct", b) // again: nothing changes
	if b.Used(savedAt) != 4 {
		t.Errorf("kept twice: used %d", b.Used(savedAt))
	}
	_, again := process(t, dir, 86400, savedAt.Add(time.Second), "acct")
	if got := again.Used(savedAt.Add(time.Second)); got != 7 {
		t.Errorf("restarted: used %d, want the 7 reserved", got)
	}
	_, ob := process(t, dir, 86400, savedAt, "another")
	if got := ob.Used(savedAt); got != 0 {
		t.Errorf("another account restored %d calls", got)
	}
}

// A reservation from the future (a clock set back, an altered file) is
// not restored: the budget says why, and the warning names the file.
func TestReservationFromTheFutureIgnored(t *testing.T) {
	dir := t.TempDir()
	_, b := process(t, dir, 86400, savedAt.Add(time.Hour), "acct")
	if ok, _ := b.Take(savedAt.Add(time.Hour)); !ok {
		t.Fatal("refused")
	}
	logs := &testtool.LogBuffer{}
	s := storeAt(dir, savedAt, log.NewLogfmtLogger(logs))
	nb := budget.New(86400, savedAt)
	s.keepBudget(config.APIData, "acct", nb)
	if got := nb.Used(savedAt); got != 0 {
		t.Errorf("a reservation from an hour ahead restored %d calls", got)
	}
	if !strings.Contains(logs.String(), "budget reservation file ignored") || !strings.Contains(logs.String(), "later than now") ||
		!strings.Contains(logs.String(), filepath.Join(dir, "budget-data.json")) {
		t.Errorf("no warning naming the file and why:\n%s", logs)
	}
}

// A reservation that cannot be written holds the calls back and is
// logged once, naming the file; once the disk takes writes again, calls
// go.
func TestReservationThatCannotBeWrittenHoldsCalls(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "budget-data.json")
	if err := os.MkdirAll(filepath.Join(path, "x"), 0o755); err != nil { // a rename cannot replace it
		t.Fatal(err)
	}
	logs := &testtool.LogBuffer{}
	s := storeAt(dir, savedAt, log.NewLogfmtLogger(logs))
	b := budget.New(960, savedAt)
	s.keepBudget(config.APIData, "acct", b)
	for i := range 3 {
		if ok, _ := b.Take(savedAt.Add(time.Duration(i) * time.Minute)); ok {
			t.Fatal("a call was allowed without its reservation on disk")
		}
	}
	if b.ReserveError() == nil {
		t.Error("no reservation error")
	}
	if n := strings.Count(logs.String(), "cannot write the day's call count"); n != 1 || !strings.Contains(logs.String(), "file="+path) {
		t.Errorf("%d error lines; want one naming %s:\n%s", n, path, logs)
	}
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
	if ok, _ := b.Take(savedAt.Add(time.Hour)); !ok {
		t.Error("the disk writable again, calls still held back")
	}
}
