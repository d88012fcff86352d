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

// Identity is the digest of what the client is made of (see Identity):
// saved pauses apply to a client of the same identity only.
func (u *Client) Identity() string { return u.identity }

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
func (u *Client) RestorePauses(ps []Pause) {
	now := u.now()
	for _, p := range ps {
		if p.By != "" && now.Before(p.Until) {
			u.pause(p.Keyed, p.Until, p.By, p.Credential)
		}
	}
}
