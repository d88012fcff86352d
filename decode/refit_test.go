package decode

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/onchain-exporter/onchain_exporter/config"
)

// A state file's sample of a field outside the tuple's list takes that
// field as the table and the rule give it today: its HELP and unit when
// its name is the same, and the entry is not taken when the name changed
// since (as a release before the count rule saved transactions_count).
// A state file of a release before Field.Source names the field in HELP.
func TestRefitSavedSamples(t *testing.T) {
	tp := tupleFor(t, `
data:
  url: http://127.0.0.1:1
  token_env: T
  metrics:
    - path: /v1/btc/network-data/transactions-count
      window: day
`)
	saved := func(name, help string) []Sample {
		var s Sample
		raw := `{"field":{"Name":` + quote(name) + `,"Help":` + quote(help) + `,"Type":"gauge","Scale":1},"value":"7"}`
		if err := json.Unmarshal([]byte(raw), &s); err != nil {
			t.Fatal(err)
		}
		return []Sample{s}
	}
	old := saved("network_transactions_count", "Field transactions_count of the network/transactions_count endpoints, as the API serves it (not in the built-in catalog).")
	if err := Refit(tp, old); err == nil || !strings.Contains(err.Error(), "named network_transactions now") {
		t.Errorf("a sample under the old name: %v", err)
	}
	today := saved("network_transactions", "Field transactions_count of the network/transactions_count endpoints, as the API serves it (not in the built-in catalog).")
	if err := Refit(tp, today); err != nil || today[0].Field.Source != "transactions_count" || strings.HasPrefix(today[0].Field.Help, "Field ") {
		t.Errorf("a sample under today's name: %v, field %+v", err, today[0].Field)
	}
	listed := []Sample{{Field: &config.Field{Name: "x", Scale: 1}, Value: 1}}
	if err := Refit(tp, listed); err != nil {
		t.Errorf("a sample of a listed field is the digest's to judge: %v", err)
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
