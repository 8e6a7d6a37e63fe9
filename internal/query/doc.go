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
// that changed, in one batch (a build from nothing goes in several, which
// keeps bleve's in-memory segments small).
//
// Searches are bleve's own: the query's words become bleve term, phrase,
// disjunction, conjunction and boolean queries with per-field boosts
// (plan.go), and bleve scores, ranks and counts the hits. Every text field
// holds each word as written and its stem, and code identifiers whole and
// split into their parts (analysis.go), so that a word matches its other
// forms, its exact form ranks first, and typos and prefixes are matched
// against words as people write them. A search runs in two passes: the
// first ranks without term locations, the second reads the locations of
// the returned page only, to cut highlighted snippets and say which words
// a typo or a prefix matched. The text is taken from the registry the
// index was last brought up to date with, and from the index only when an
// Update wrote it while the search ran.
//
// Two pieces are this package's own, both through bleve's index reader
// API (no assertion on scorch's types):
//   - expand.go looks the longer words a word starts and the words one
//     typo away up once per search in the term dictionaries, and searches
//     them as term queries, where bleve's prefix and fuzzy queries build a
//     Levenshtein automaton per field and search every longer word, also
//     those that the word's stem already matches;
//   - locate.go reads the returned page's term locations from the postings
//     of the terms the query may have matched, where bleve's way is to run
//     the whole query again, with locations, in conjunction with the page's
//     ids.
//
// BenchmarkSearch (captest, 2,120 documents, limit 10) measures both ways
// in one run: with bleve's queries for both steps p50 3.0 ms, p99 14 ms;
// with these pieces p50 0.89 ms, p99 3.2 ms (a quiet 2-core machine; on a
// loaded one 6.2 / 58 ms against 1.3 / 8.8 ms, where the scorer these
// replaced measured p50 0.56 ms). Ranking, counting and scoring are
// bleve's in both, and they are most of what is left: about 60% of a
// search is bleve's searchers and collector walking the postings of the
// words (~125 ns a posting; a common word stands in nearly all of the
// corpus's bodies), 13% reading the page's locations, 11% the lookups.
//
// A third piece reads a library's file format rather than its API: bolt.go
// reads the two meta pages of the bbolt file in which scorch keeps its
// snapshots (bbolt's format, version 2) before bleve opens the index.
// bbolt maps that file and trusts the page numbers it reads there, so a
// file cut short (a disk full, a copy interrupted) makes the process die
// of a memory fault, which no recover catches: bleve v2.6.1 over bbolt
// v1.4.0 does (8 times in 8 on a file cut to its meta pages), and
// TestBleveOpensTruncatedBolt fails the day bleve.Open comes back instead. checkBolt costs 7.7 µs an Open, against 26 ms for reopening the
// captest corpus (BenchmarkCheckBolt, BenchmarkReopen, 2-core machine,
// 2026-11-25); a truncated file is rebuilt instead of killing the server.
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
//   - change process-wide settings (the collector's target, returning
//     memory to the system): a build from nothing tells its caller through
//     Options.OnBuild, and cmd/omnidev decides;
//   - crash or give up on an index folder it cannot use (corrupt, foreign,
//     written by another schema version): it is deleted and rebuilt, and the
//     reason logged. The one exception is an index locked by another live
//     Index (ErrLocked), which is left alone.
package query
