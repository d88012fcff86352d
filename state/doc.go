// Package state keeps what the exporter learned across restarts
// (--storage.path): one JSON file per API section, read at start and
// written while it runs. It owns the file format and the bounds on what
// is trusted from a file; package collector builds the files from its
// engine and takes them back at start, and package expand fills and
// reads the listing answers through expand.Store, which a Store is.
// It never imports package collector.
//
// It owns:
//
//   - tuple.go: Tuple, what a tuple has learned (its last values, its
//     outcome and its schedule.Plan), the one value of a tuple that
//     survives a reload or a restart; the digest that ties a saved tuple
//     to a configured one of the same request and series; the bounds on
//     a saved tuple (counters, a plan no further ahead than any schedule
//     makes);
//   - file.go: File, the content of one API's file (format version 3:
//     tuples, learned delays, pauses, listing answers, the day's call
//     count), and Decode, which reads and validates one;
//   - store.go: the Store: the files read at start (Open, which also
//     takes the directory's lock, or OpenStore; a file that cannot be
//     used is a warning and a cold start of its API), one API section's
//     File handed over once to an API section of the same account, with
//     only the entries of its configured tuples read (Take), its pauses
//     restored once (RestorePauses), the listing answers kept in an
//     expand.Cache, and each file written atomically when it changed
//     (Write). A nil *Store keeps nothing;
//   - check.go: a file is checked like configuration: every number
//     restored within what the exporter writes, else that entry dropped
//     with a warning naming the file and the entry; the size of a file
//     bounded by the configuration it serves (fileBound, in file.go);
//   - budget.go: the day's count of calls reserved before they leave
//     (KeepBudget: budget.SetReserver writing DIR/budget-API.json,
//     synced and renamed, one write per chunk of calls);
//   - lock.go: one process per directory (LockDir: flock on DIR/.lock,
//     the holder's pid in it).
package state
