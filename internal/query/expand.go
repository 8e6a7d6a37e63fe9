package query

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	index "github.com/blevesearch/bleve_index_api"
)

// maxCandidates bounds the terms a typo stands for: a typo means one word,
// not a hundred.
const maxCandidates = 64

// A prefix stands, in each field, for the maxExtensions longer words with
// the most postings among the first maxScanned that start with it: the
// words people most likely mean, and a bounded walk of the dictionary. In
// byte order alone, "config" stood for config.database, config.default,
// config.get and 61 more identifiers before it reached "configuration";
// the recall benchmark's prefixes of rare words were found as often.
const (
	maxExtensions = 16
	maxScanned    = 256
)

// expander is the dictionary of one reader of the index, through bleve's
// index API. Looking the longer words and the typos of a word up once per
// query, rather than letting bleve's prefix and fuzzy queries do it in each
// of the two passes of a search (see Index.search), lets the second pass
// read the locations of known terms only, and leaves out the longer words
// that the word's stem matches already. What that saves is measured by
// BenchmarkSearch (expansion=bleve against expansion=dictionary) and
// written in doc.go.
type expander struct {
	ctx context.Context
	r   index.IndexReader
	// err is the first error of a lookup; the lookups after it find
	// nothing.
	err error
}

func (e *expander) fail(err error) {
	e.err = cmp.Or(e.err, err)
}

// postings counts in the fields with the most postings first, and stops
// once it has counted more than enough: each field costs a lookup in each
// of the index's segments.
func (e *expander) postings(term string, enough int) int {
	n := 0
	for i := len(fieldBoosts) - 1; i >= 0 && n <= enough; i-- {
		if e.err != nil {
			return 0
		}
		tfr, err := e.r.TermFieldReader(e.ctx, []byte(term), fieldBoosts[i].field, false, false, false)
		if err != nil {
			e.fail(err)
			return 0
		}
		n += int(tfr.Count())
		tfr.Close()
	}
	return n
}

func (e *expander) extensions(field, prefix string) []string {
	if e.err != nil {
		return nil
	}
	fd, err := e.r.FieldDictPrefix(field, []byte(prefix))
	if err != nil {
		e.fail(err)
		return nil
	}
	defer fd.Close()
	type entry struct {
		term     string
		postings uint64
	}
	var all []entry
	for len(all) < maxScanned {
		d, err := fd.Next()
		if err != nil {
			e.fail(err)
			return nil
		}
		if d == nil {
			break
		}
		if d.Term != prefix {
			all = append(all, entry{d.Term, d.Count})
		}
	}
	if len(all) > maxExtensions {
		slices.SortStableFunc(all, func(a, b entry) int { return cmp.Compare(b.postings, a.postings) })
		all = all[:maxExtensions]
		slices.SortFunc(all, func(a, b entry) int { return strings.Compare(a.term, b.term) })
	}
	out := make([]string, len(all))
	for i, en := range all {
		out[i] = en.term
	}
	return out
}

// typoFields are the fields whose dictionaries typos are looked up in:
// bleve builds a Levenshtein automaton for each, and between them they hold
// nearly every word of the others (a doc's title is its body's heading).
// The words found are then searched in every field.
var typoFields = [...]string{fieldBody, fieldDescription}

func (e *expander) typos(term string) []string {
	if e.err != nil {
		return nil
	}
	fz, ok := e.r.(index.IndexReaderFuzzy)
	if !ok { // scorch, the only index type Open accepts, does
		e.fail(fmt.Errorf("index reader %T cannot look up words within a typo", e.r))
		return nil
	}
	found := make(map[string]uint8)
	for _, f := range typoFields {
		fd, err := fz.FieldDictFuzzy(f, term, 1, "")
		if err != nil {
			e.fail(err)
			return nil
		}
		for {
			d, err := fd.Next()
			if err != nil {
				fd.Close()
				e.fail(err)
				return nil
			}
			if d == nil {
				break
			}
			if old, ok := found[d.Term]; !ok || d.EditDistance < old {
				found[d.Term] = d.EditDistance
			}
		}
		fd.Close()
	}
	out := make([]string, 0, len(found))
	for t := range found {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b string) int {
		return cmp.Or(cmp.Compare(found[a], found[b]), strings.Compare(a, b))
	})
	return out[:min(len(out), maxCandidates)]
}
