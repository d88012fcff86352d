package upstream

import "time"

// Pause is an API-wide pause in force, in the form kept across restarts:
// a quota spent or a credential rejected stays so after a restart, and
// calling again at once would spend calls on answers known in advance.
type Pause struct {
	Keyed      bool      `json:"keyed"` // the lane: keyed calls, or key-free ones
	Until      time.Time `json:"until"`
	By         string    `json:"by"` // the error code that paused the lane
	Credential bool      `json:"credential,omitempty"`
}

// Identity is the digest of what the client is made of (see Identity).
func (u *Client) Identity() string { return u.identity }

// Account is the digest of the client's API, address and credential (see
// Account): saved state, pauses included, applies to the same account
// only.
func (u *Client) Account() string { return Account(u.api) }

// Pauses returns the pauses in force, for saving.
func (u *Client) Pauses() []Pause {
	u.mu.Lock()
	defer u.mu.Unlock()
	var out []Pause
	now := u.now()
	for i, p := range u.pauses {
		if p.by != "" && now.Before(p.until) {
			out = append(out, Pause{Keyed: i == 1, Until: p.until, By: p.by, Credential: p.credential})
		}
	}
	return out
}

// RestorePauses applies saved pauses that have not ended yet; a pause
// longer than one in force wins, as it does when an error sets it.
//
// A saved pause ends no later than MaxRestoredPause from now: a file
// written under a wrong clock, or altered, must not silence the API for
// longer than any pause the upstream can ask for (a daily quota resets
// within a day).
func (u *Client) RestorePauses(ps []Pause) {
	now := u.now()
	for _, p := range ps {
		if p.By == "" || !now.Before(p.Until) {
			continue
		}
		until := minTime(p.Until, now.Add(MaxRestoredPause))
		if u.pause(p.Keyed, until, p.By, p.Credential) {
			u.logCredentialPause(p.Keyed, until, p.By, true)
		}
	}
}

// MaxRestoredPause is the longest pause taken from a state file.
const MaxRestoredPause = 24 * time.Hour

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
