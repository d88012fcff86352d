package collector

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/onchain-exporter/onchain_exporter/fakeapi"
	"github.com/onchain-exporter/onchain_exporter/internal/testtool"
	"github.com/onchain-exporter/onchain_exporter/published"
)

// viewOf is the published view of the series of a path.
func viewOf(t *testing.T, e *Exporter, path string) published.Series {
	t.Helper()
	for _, a := range e.View() {
		for _, s := range a.Series {
			if s.Tuple.Path == path {
				return s
			}
		}
	}
	t.Fatalf("no series of %s in the view", path)
	return published.Series{}
}

// The view publishes each series' last answers and the text of its last
// failure: the member that called says what failed in full; a member
// that took a peer's row says the peer's outcome, its code and when, as
// a peer's answer, and a success clears the text.
func TestViewPublishesAnswersAndTheErrorText(t *testing.T) {
	const yml = testtool.DataSection + `    - path: /v1/btc/network-data/supply
      window: day
    - path: /v1/btc/bench-data/not-served
      window: day
`
	const live, gone = "/v1/btc/network-data/supply", "/v1/btc/bench-data/not-served"
	owner := newEnv(t, yml, fakeapi.Options{})
	replica := envOn(t, owner.clock, owner.srv, yml)
	owner.scrape("10")
	for _, e := range engines(owner.exp) {
		for _, row := range e.appendRows(nil, nil) {
			b, err := json.Marshal(row)
			if err != nil {
				t.Fatal(err)
			}
			if err := (replicated{replica.exp}).Merge(b); err != nil {
				t.Fatal(err)
			}
		}
	}

	ok, failed := viewOf(t, owner.exp, live), viewOf(t, owner.exp, gone)
	if len(ok.Answers) != 1 || ok.Answers[0].Outcome != published.AnswerOK || ok.Answers[0].By != published.ByThis || ok.Answers[0].Shape == nil ||
		ok.Answers[0].Samples == 0 || ok.LastError != "" {
		t.Errorf("the owner's live series: %+v, error %q", ok.Answers, ok.LastError)
	}
	if len(failed.Answers) != 1 || failed.Answers[0].Outcome != published.AnswerError || failed.Answers[0].Code == "" ||
		!strings.HasPrefix(failed.LastError, "refresh failed") || !strings.Contains(failed.LastError, gone) {
		t.Errorf("the owner's failing series: %+v, error %q", failed.Answers, failed.LastError)
	}

	ok, failed = viewOf(t, replica.exp, live), viewOf(t, replica.exp, gone)
	if len(ok.Answers) != 1 || ok.Answers[0].Outcome != published.AnswerOK || ok.Answers[0].By != published.ByPeer || ok.LastError != "" {
		t.Errorf("the replica's live series: %+v, error %q", ok.Answers, ok.LastError)
	}
	code := viewOf(t, owner.exp, gone).Answers[0].Code
	if len(failed.Answers) != 1 || failed.Answers[0].Outcome != published.AnswerError || failed.Answers[0].By != published.ByPeer ||
		failed.Answers[0].Code != code || !strings.Contains(failed.LastError, "a peer made") ||
		!strings.Contains(failed.LastError, viewOf(t, owner.exp, gone).LastError) {
		t.Errorf("the replica's failing series: %+v, error %q", failed.Answers, failed.LastError)
	}
}
