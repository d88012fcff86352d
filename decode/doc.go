// Package decode reads upstream answers: it parses each answer once, in
// memory bounded by what is kept (Parse), finds where its rows and their
// times are in any of the shapes the APIs may answer in (FindRows,
// FindTimeKey, ParseTime), and turns rows into samples: the newest value
// of every field for a refresh (Latest; LatestAt also leaves out rows
// dated after now and one row spacing), every row for history (History).
// A row adds at most max_fields numeric fields outside the catalog as
// families; the rest are counted (Answer.FieldsDropped) before any
// sample is made of them.
// Items (one per analyst) are counted into the counts a series serves.
package decode
