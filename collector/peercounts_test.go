package collector

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/testtool"
	"github.com/onchain-exporter/onchain_exporter/testtool/simclock"
)

// Rows gossiped under 64 names that are no serving member, each with a
// count of the day's calls at a member's pace, and two with counts near
// int64's max, reach a member at 05:39 UTC with a daily_budget of 20 000
// (the hostile run): they count nothing, and its calls are neither held
// until 00:00 nor by an empty bucket. Before, 310 057 calls were counted
// and every call stopped until the next day.
func TestRogueCountsNeitherSpendNorHold(t *testing.T) {
	clk := simclock.New(time.Date(2026, 11, 29, 5, 39, 0, 0, time.UTC))
	up := testtool.StartFake(t, fakeapi.Options{Now: clk.Now})
	up.Clock = clk
	yml := strings.Replace(supplyConfig, "  token_env: T\n", "  token_env: T\n  daily_budget: 20000\n", 1)
	a := startReplica(t, "a", yml, up)
	eng := engines(a.exp)[0]
	eng.mu.Lock()
	b := eng.up.Budget()
	eng.mu.Unlock()
	if b == nil {
		t.Fatal("no budget")
	}
	day := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	send := func(member string, used int) {
		row, err := json.Marshal(peerRow{API: "data", Key: "not-a-tuple", Member: member, Day: day, Used: used})
		if err != nil {
			t.Fatal(err)
		}
		if err := (replicated{a.exp}).Merge(row); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 64 {
		send(fmt.Sprintf("rogue-%d", i), 4900)
	}
	send("huge-1", math.MaxInt64)
	send("huge-2", math.MaxInt64-1)
	now := clk.Now()
	if used := b.Used(now); used != 0 {
		t.Errorf("names that are no member counted %d calls of the day", used)
	}
	if ok, next := b.Take(now); !ok {
		t.Errorf("this member's calls are held until %s", next.Format(time.RFC3339))
	}
}
