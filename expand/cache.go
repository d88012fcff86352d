package expand

import (
	"sync"
	"time"

	"github.com/onchain-exporter/onchain_exporter/config"
	"github.com/onchain-exporter/onchain_exporter/decode"
	"github.com/onchain-exporter/onchain_exporter/upstream"
)

// Store is what keeps the listing answers across restarts: a
// persist.Store, which writes them in each API's state file under
// --storage.path (the pauses a list call must respect at start are
// restored on the client as the pool puts it in force,
// upstream.Pool.OnClient). Its methods accept a nil receiver, which
// keeps nothing.
type Store interface {
	// Cache returns the Cache the Store writes the listing answers from
	// at every save, filled at start with those the last run saved; nil
	// when the Store keeps nothing. The Expander uses it as its own.
	Cache() *Cache
}

// Answer is the answer of a listing endpoint as a state file keeps it.
type Answer struct {
	Rows []map[string]any `json:"rows"`
	At   time.Time        `json:"at"`
}

// Cache holds the answers of the listing endpoints: the only copy of them
// in memory. Expansion reads it and puts there what it fetched; a Store
// (persist.Store) fills it at start with the answers the last run saved
// and writes from it at every save, so that what a restart reuses is
// what this run read. Every Expander given the same Store shares its
// Cache.
type Cache struct {
	mu sync.Mutex
	// lists holds the answers this run fetched, or took from saved, under
	// listKey: API, address and path.
	lists map[string]cachedList
	// saved holds per API the answers the last run saved, by path, until
	// an expansion of an API section of the same account takes them
	// into lists.
	saved map[string]savedAnswers
	// gen is bumped by Maintain's refresh: answers of older generations
	// are fetched again.
	gen int
}

// cachedList is one answer in the Cache, under listKey.
type cachedList struct {
	api, path string
	// account is the upstream.Account of the API section it was read
	// for: a save writes it in that account's file only.
	account string
	rows    []map[string]any
	at      time.Time
	gen     int
	// saved: read from the state of the last run, not fetched by this
	// one; reused up to Refresh, as the last run would have.
	saved bool
}

type savedAnswers struct {
	account string
	byPath  map[string]*Answer
}

// NewCache returns an empty Cache.
func NewCache() *Cache {
	return &Cache{lists: map[string]cachedList{}, saved: map[string]savedAnswers{}}
}

// Restore hands the Cache the answers the last run saved for an API,
// by path, and the account (upstream.Account) of the section they were
// read for. They are reused by an expansion of a section of that account
// and, until then, saved again as they were. Their rows are kept with
// their equal values shared (decode.ShareRows), like those put.
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
// account, by path: those read for that account, this run's where it
// read them again; nil when there is none. A Store calls it at every
// save; the answers are not copied, and never changed once in the Cache.
func (c *Cache) Saved(api, account string) map[string]*Answer {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var out map[string]*Answer
	add := func(path string, a *Answer) {
		if out == nil {
			out = map[string]*Answer{}
		}
		out[path] = a
	}
	if s, ok := c.saved[api]; ok && s.account == account {
		for path, a := range s.byPath {
			add(path, a)
		}
	}
	for _, l := range c.lists {
		if l.api == api && l.account == account {
			add(l.path, &Answer{Rows: l.rows, At: l.at})
		}
	}
	return out
}

// lookup returns the answer of a listing endpoint of a, if the Cache
// holds one: fetched by this run, or saved by the last for a section of
// the same account (taken in, from then on, as this run's). gen is the
// generation an answer fetched now belongs to.
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
// generation gen, its equal values shared (decode.ShareRows): the rows
// are the Cache's from then on, and never changed.
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
// use, the last good one standing in when that fails.
func (c *Cache) renew() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
}
