package expand

import (
	"maps"
	"sync"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/decode"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// Store keeps the listing answers across restarts (a persist.Store, in
// each API's state file). Its methods accept a nil receiver, which keeps
// nothing.
type Store interface {
	// Cache returns the Cache the Store saves from, filled at start with
	// what the last run saved; nil when it keeps nothing.
	Cache() *Cache
}

// Answer is the answer of a listing endpoint as a state file keeps it.
type Answer struct {
	Rows []map[string]any `json:"rows"`
	At   time.Time        `json:"at"`
}

// Cache holds the answers of the listing endpoints, the only copy in
// memory: expansion reads and fills it, a Store restores and saves it.
type Cache struct {
	mu sync.Mutex
	// lists holds the answers this run fetched, or took from saved, under
	// listKey.
	lists map[string]cachedList
	// saved holds per API the answers the last run saved, by path, until
	// an expansion of the same account takes them into lists.
	saved map[string]savedAnswers
	// gen is bumped by Maintain's refresh: older answers are fetched again.
	gen int
}

// cachedList is one answer in the Cache, under listKey.
type cachedList struct {
	api, path string
	account   string // upstream.Account it was read for: saved in its file only
	rows      []map[string]any
	at        time.Time
	gen       int
	saved     bool // the last run's, reused up to Refresh
}

type savedAnswers struct {
	account string
	byPath  map[string]*Answer
}

// NewCache returns an empty Cache.
func NewCache() *Cache {
	return &Cache{lists: map[string]cachedList{}, saved: map[string]savedAnswers{}}
}

// Restore hands the Cache the answers the last run saved for an API, by
// path, and the account they were read for: reused by an expansion of
// that account and, until then, saved again as they were.
func (c *Cache) Restore(api, account string, byPath map[string]*Answer) {
	kept := make(map[string]*Answer, len(byPath))
	for path, a := range byPath {
		if a != nil {
			decode.ShareRows(a.Rows)
			kept[path] = a
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(kept) == 0 {
		delete(c.saved, api)
		return
	}
	c.saved[api] = savedAnswers{account: account, byPath: kept}
}

// Saved returns the answers to save in the file of an API section of
// account, by path (this run's over the last's); nil when there is none.
// They are not copied: nothing in the Cache is ever changed.
func (c *Cache) Saved(api, account string) map[string]*Answer {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]*Answer{}
	if s, ok := c.saved[api]; ok && s.account == account {
		maps.Copy(out, s.byPath)
	}
	for _, l := range c.lists {
		if l.api == api && l.account == account {
			out[l.path] = &Answer{Rows: l.rows, At: l.at}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// lookup returns the answer of a listing endpoint of a, if the Cache
// holds one: this run's, or the last run's for the same account (taken
// in as this run's). gen is the generation of an answer fetched now.
func (c *Cache) lookup(a *config.API, path string) (l cachedList, ok bool, gen int) {
	key := listKey(a, path)
	c.mu.Lock()
	l, ok = c.lists[key]
	_, restoring := c.saved[a.Name]
	gen = c.gen
	c.mu.Unlock()
	if ok || !restoring {
		return l, ok, gen
	}
	account := upstream.Account(a) // a slow digest, once per section: out of the lock
	c.mu.Lock()
	defer c.mu.Unlock()
	if l, ok = c.lists[key]; ok {
		return l, ok, c.gen
	}
	s := c.saved[a.Name]
	saved := s.byPath[path]
	if saved == nil || s.account != account {
		return cachedList{}, false, c.gen
	}
	delete(s.byPath, path)
	if len(s.byPath) == 0 {
		delete(c.saved, a.Name)
	}
	l = cachedList{api: a.Name, path: path, account: account, rows: saved.Rows, at: saved.At, gen: c.gen, saved: true}
	c.lists[key] = l
	return l, true, c.gen
}

// put keeps the answer of a listing endpoint of a, fetched at at in
// generation gen, its values shared (decode.ShareRows): the rows are the
// Cache's from then on.
func (c *Cache) put(a *config.API, path string, rows []map[string]any, at time.Time, gen int) {
	decode.ShareRows(rows)
	account := upstream.Account(a)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lists[listKey(a, path)] = cachedList{api: a.Name, path: path, account: account, rows: rows, at: at, gen: gen}
}

// drop forgets the answer of a listing endpoint of a (Options.Once).
func (c *Cache) drop(a *config.API, path string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.lists, listKey(a, path))
}

// renew starts a generation: every answer is fetched again at its next
// use.
func (c *Cache) renew() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
}
