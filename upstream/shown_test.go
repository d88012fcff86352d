package upstream

import (
	"net/url"
	"testing"
)

// A tuple's query in log lines and on the page is shown by the one
// masking rule: a credential parameter masked, an ERC-20 token symbol
// shown.
func TestShownQueryMasksByTheOneRule(t *testing.T) {
	q := url.Values{"api_key": {"s3cr3t"}, "token": {"usdt"}, "window": {"day"}}
	if got, want := ShownQuery(q), "api_key=<redacted>&token=usdt&window=day"; got != want {
		t.Errorf("shown as %q, want %q", got, want)
	}
}
