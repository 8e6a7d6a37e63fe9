// Package query is the engine of the omni_query tool: a full-text index over
// the documents of a capability.Registry (capabilities, skills, docs, rules)
// that answers ranked, highlighted searches, capability summaries and
// TypeScript type definitions.
//
// The index is a bleve scorch index on disk under the folder given to Open,
// with a manifest beside it (whose index, which schema version) and the
// content hash of every document inside it, written in the same batch as
// the documents. A restart with unchanged capabilities reopens it without
// indexing anything again, and a reload (Update) rewrites only the documents
// that changed, in one batch.
//
// A search reads one snapshot of the index in two steps: the first scores
// every matching document from the postings alone, with bleve's TF-IDF
// computed by this package (score.go; bleve's searchers gave the same
// scores at twice the cost), the second reads term locations for the
// returned page only, to cut highlighted snippets. The text is taken from
// the registry the index was last brought up to date with, and from the
// snapshot only when an Update wrote the index while the search began.
//
// Queries are built programmatically from the analyzed words of the user's
// text — never parsed with bleve's query-string syntax — so no input can make
// a search fail with a syntax error.
//
// What this package must never do:
//   - use bleve.NewMemOnly: its upside_down store is orders of magnitude slower
//     and larger, and in-memory scorch has no segment merger (see DESIGN.md);
//   - index a capability that is not enabled: only Registry.Capabilities are
//     indexed, and Update removes whatever left them;
//   - highlight a hit that is not returned: reading term locations for every
//     match made searches 2-3 times slower, so they are read for the
//     returned page only;
//   - crash or give up on an index folder it cannot use (corrupt, foreign,
//     written by another schema version): it is deleted and rebuilt, and the
//     reason logged. The one exception is an index locked by another live
//     Index (ErrLocked), which is left alone.
package query
