// Package state keeps what the exporter learned across restarts
// (--storage.path) as plain data: one JSON file per API section, read at
// start and written while it runs, holding each owner's snapshot (the
// collector's tuples, the schedule's learned delays, the client's pauses,
// the listing answers, the budget's day count) as the owner wrote it. It
// imports none of the exporter's packages (internal/jsonerr aside, which
// shortens JSON errors): what a snapshot means, and
// whether it may be trusted, is its owner's to say (package collector
// hands each part back to its owner, which checks it).
//
// It owns:
//
//   - file.go: File, the content of one API's file (format version 3:
//     the tuples' entries by key, then each owner's part), Decode, which
//     reads one and refuses what is not a file of this format and API,
//     and the bound on a file's size under the configuration it serves
//     (fileBound);
//   - store.go: the Store: the files read at start (Open, which also
//     takes the directory's lock, or OpenStore; a file that cannot be
//     used is a warning and a cold start of its API), one API section's
//     File handed back once to a section of the same account with only
//     the entries of the tuples it asks for read (Take), its pauses and
//     its listing answers handed back once each (Pauses, Lists), the
//     entries an owner refused logged naming the file and the entry
//     (Dropped), and each file written atomically when it changed
//     (Write). A nil *Store keeps nothing;
//   - budget.go: the day's count of calls reserved before they leave:
//     Reserve writes DIR/budget-API.json, synced and renamed, before it
//     returns (the budget calls it before each chunk of calls leaves);
//     TakeReservation hands it back once at the next start;
//   - lock.go: one process per directory (LockDir: flock on DIR/.lock,
//     the holder's pid in it).
package state
