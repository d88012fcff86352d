package upstream

import (
	"time"

	"github.com/go-kit/log/level"
	"github.com/onchain-exporter/onchain_exporter/config"
)

// Pause is an API-wide pause in force, as kept across restarts: a quota
// spent or a credential rejected stays so after one.
type Pause struct {
	Keyed      bool      `json:"keyed"` // the lane: keyed calls, or key-free ones
	Until      time.Time `json:"until"`
	By         string    `json:"by"` // the error code that paused the lane
	Credential bool      `json:"credential,omitempty"`
}

// Identity is the digest of what the client is made of (Identity).
func (u *Client) Identity() string { return u.identity }

// Account is the digest saved state is kept under (Account).
func (u *Client) Account() string { return Account(u.api) }

// Pauses returns the pauses in force, for saving.
func (u *Client) Pauses() []Pause {
	u.mu.Lock()
	defer u.mu.Unlock()
	var out []Pause
	now := u.now()
	for _, p := range u.pauses {
		if p.By != "" && now.Before(p.Until) {
			out = append(out, p)
		}
	}
	return out
}

// RestorePauses applies saved pauses that have not ended yet; a pause
// longer than one in force wins. A saved pause ends within
// MaxRestoredPause: a file written under a wrong clock, or altered, must
// not silence the API longer than the upstream can ask (a daily quota
// resets within a day).
func (u *Client) RestorePauses(ps []Pause) {
	now := u.now()
	for _, p := range ps {
		if p.By == "" || !now.Before(p.Until) {
			continue
		}
		until := p.Until
		if most := now.Add(MaxRestoredPause); until.After(most) {
			until = most
		}
		if u.pause(p.Keyed, until, p.By, p.Credential) {
			u.logCredentialPause(p.Keyed, until, p.By, true)
		}
	}
}

// MaxRestoredPause is the longest pause taken from a state file.
const MaxRestoredPause = 24 * time.Hour

// Reloaded lifts the pauses a reload may have fixed: those of a rejected
// or unentitled credential. Rate-limit and quota pauses stay.
func (u *Client) Reloaded() {
	u.lift(func(p Pause) bool { return p.Credential })
	u.mu.Lock()
	u.noRaw = false // the plan may have changed too
	u.mu.Unlock()
}

func (u *Client) lift(which func(Pause) bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for i := range u.pauses {
		if by := u.pauses[i].By; by != "" && which(u.pauses[i]) {
			u.pauses[i] = Pause{}
			u.unmark(by)
		}
	}
}

// paused reports a pause in force on the lane of a call.
func (u *Client) paused(keyed bool) (time.Time, string, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	p := &u.pauses[lane(keyed)]
	if p.Until.IsZero() {
		return time.Time{}, "", false
	}
	if !u.now().Before(p.Until) {
		by := p.By
		*p = Pause{}
		u.unmark(by)
		return time.Time{}, "", false
	}
	return p.Until, p.By, true
}

// pause stops the calls of a lane until then, unless a longer pause is in
// force. It reports whether a credential pause starts (not one already),
// so that the calls failing together log it once.
func (u *Client) pause(keyed bool, until time.Time, code string, credential bool) bool {
	code = labelCode(code) // saved pauses are read back through here
	u.mu.Lock()
	defer u.mu.Unlock()
	p := &u.pauses[lane(keyed)]
	if u.closed || !until.After(p.Until) {
		return false
	}
	started := credential && !(p.Credential && u.now().Before(p.Until))
	old := p.By
	*p = Pause{Keyed: keyed, Until: until, By: code, Credential: credential}
	u.unmark(old)
	u.m.apiPaused.DeleteLabelValues(u.api.Name, "")
	u.m.apiPaused.WithLabelValues(u.api.Name, code).Set(1)
	return started
}

// logCredentialPause says that the credential was refused, where it is
// read from (never its value) and how to lift the pause once fixed.
func (u *Client) logCredentialPause(keyed bool, until time.Time, code string, restored bool) {
	calls := "all calls"
	if u.api.Name != config.APIData {
		calls = "keyed calls"
		if !keyed {
			calls = "key-free calls"
		}
	}
	msg := "the upstream refused the credential: " + calls + " of the API are paused"
	if restored {
		msg = "the credential was refused before the restart: " + calls + " of the API stay paused"
	}
	source := u.api.CredentialSource()
	if source == "" {
		source = "none set (token_env or token_file)"
	}
	level.Error(u.logger).Log("msg", msg, "code", code, "until", until.UTC().Format(time.RFC3339), "credential", source,
		"hint", u.api.CredentialHint())
}

// unmark clears the paused gauge of a code no lane is paused by; with no
// pause left the series without a code says 0, so that the family exists
// for every API from the start.
func (u *Client) unmark(code string) {
	paused := false
	for _, p := range u.pauses {
		paused = paused || p.By != ""
		if code != "" && p.By == code {
			return
		}
	}
	if code != "" {
		u.m.apiPaused.DeleteLabelValues(u.api.Name, code)
	}
	if !paused {
		u.m.apiPaused.WithLabelValues(u.api.Name, "").Set(0)
	}
}
