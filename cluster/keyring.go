package cluster

import (
	"bytes"
	"crypto/sha256"

	"github.com/go-kit/log/level"
)

// A gossip key is rotated without a partition by memberlist's keyring:
// every member encrypts with the primary key and accepts any key of its
// ring. The key file (--cluster.encryption-key-file) lists the keys, the
// primary first, and is read again every --cluster.reconnect-interval, so
// a rotation is three edits of the file (or of the Secret it is mounted
// from), each made on every member before the next:
//
//  1. add the new key on a second line: every member accepts it, all
//     still send with the old one;
//  2. swap the lines: members send with the new key, which every member
//     accepts, and still accept the old one from those not yet swapped;
//  3. remove the old key.
//
// onchain_exporter_cluster_encryption_keys shows each member's count.

// keysSum is a digest of the keys, to tell a changed file from the one
// installed; it is never shown.
func keysSum(keys [][]byte) [32]byte {
	return sha256.Sum256(bytes.Join(keys, []byte{0}))
}

// reloadKeys reads the key file again and installs what changed: new keys
// first, then the primary, then it removes the keys the file no longer
// holds. A file that cannot be read or holds no valid key keeps the ring
// as it is, logged; the error never quotes the file.
func (p *Peer) reloadKeys() {
	if p.keyring == nil {
		return // in the clear: turning encryption on needs a restart
	}
	keys, err := readKeys(p.cfg.KeyFile)
	if err != nil {
		p.m.keyReloads.WithLabelValues("failure").Inc()
		level.Warn(p.logger).Log("msg", "cannot read the gossip keys again; the keys in use stay", "err", err)
		return
	}
	sum := keysSum(keys)
	if sum == p.keysSum {
		return
	}
	for _, k := range keys {
		if err := p.keyring.AddKey(k); err != nil {
			p.m.keyReloads.WithLabelValues("failure").Inc()
			level.Warn(p.logger).Log("msg", "cannot install a gossip key; the keys in use stay", "err", err)
			return
		}
	}
	if err := p.keyring.UseKey(keys[0]); err != nil {
		p.m.keyReloads.WithLabelValues("failure").Inc()
		level.Warn(p.logger).Log("msg", "cannot make the first gossip key primary", "err", err)
		return
	}
	keep := map[string]bool{}
	for _, k := range keys {
		keep[string(k)] = true
	}
	for _, k := range p.keyring.GetKeys() {
		if !keep[string(k)] {
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

// Encrypted reports whether gossip is encrypted and authenticated
// (--cluster.encryption-key-file): false in the clear, where anyone who
// reaches the port can change what every member serves, which a page
// should say. A nil *Peer (no cluster) returns false.
func (p *Peer) Encrypted() bool {
	return p != nil && p.keyring != nil
}
