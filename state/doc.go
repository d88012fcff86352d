// Package state keeps what the exporter learned across restarts
// (--storage.path) as plain data: one JSON file per API section, holding
// each owner's snapshot (tuples, learned delays, pauses, listing answers,
// the budget's day count) as the owner wrote it. It imports none of the
// exporter's packages but internal/jsonerr: whether a snapshot may be
// trusted is its owner's to say (package collector hands each part back).
//
// file.go is the format (version 3) and the bound on a file's size under
// its configuration; store.go reads the files at start, hands each part
// back once to a section of the same account and writes each file
// atomically when it changed; budget.go is the day's call count reserved
// before calls leave (DIR/budget-API.json); lock.go is one process per
// directory. A nil *Store keeps nothing.
package state
