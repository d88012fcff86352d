package cluster

import (
	"bytes"
	"crypto/sha256"
	"slices"

	"github.com/go-kit/log/level"
)

// A gossip key is rotated without a partition: every member encrypts with
// the primary (the file's first key) and accepts every key of its ring.
// A rotation is three edits of the key file, each on every member before
// the next: add the new key second, swap the lines, remove the old key.

// keysSum tells a changed file from the one installed; never shown.
func keysSum(keys [][]byte) [32]byte {
	return sha256.Sum256(bytes.Join(keys, []byte{0}))
}

// reloadKeys installs what changed in the key file: new keys, then the
// primary, then it removes keys no longer there. A file that cannot be
// read keeps the ring as it is, logged.
func (p *Peer) reloadKeys() {
	if p.keyring == nil {
		return // in the clear: turning encryption on needs a restart
	}
	fail := func(msg string, err error) {
		p.m.keyReloads.WithLabelValues("failure").Inc()
		level.Warn(p.logger).Log("msg", msg, "err", err)
	}
	keys, err := readKeys(p.cfg.KeyFile)
	if err != nil {
		fail("cannot read the gossip keys again; the keys in use stay", err)
		return
	}
	sum := keysSum(keys)
	if sum == p.keysSum {
		return
	}
	for _, k := range keys {
		if err := p.keyring.AddKey(k); err != nil {
			fail("cannot install a gossip key; the keys in use stay", err)
			return
		}
	}
	if err := p.keyring.UseKey(keys[0]); err != nil {
		fail("cannot make the first gossip key primary", err)
		return
	}
	for _, k := range p.keyring.GetKeys() {
		if !slices.ContainsFunc(keys, func(x []byte) bool { return bytes.Equal(x, k) }) {
			if err := p.keyring.RemoveKey(k); err != nil {
				level.Warn(p.logger).Log("msg", "cannot remove a gossip key the file no longer holds", "err", err)
			}
		}
	}
	p.keysSum = sum
	p.m.keyReloads.WithLabelValues("success").Inc()
	level.Info(p.logger).Log("msg", "gossip keys reloaded", "keys", len(p.keyring.GetKeys()))
}

// keyCount is how many keys the ring holds: 0 in the clear.
func (p *Peer) keyCount() int {
	if p.keyring == nil {
		return 0
	}
	return len(p.keyring.GetKeys())
}

// Encrypted reports whether gossip is encrypted and authenticated; false
// in the clear or for a nil *Peer.
func (p *Peer) Encrypted() bool {
	return p != nil && p.keyring != nil
}
