package query

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	index "github.com/blevesearch/bleve_index_api"
)

// maxCandidates bounds the terms a prefix or a typo stands for, per field:
// a typo means one word, not a hundred, and a short prefix of a common
// stem would otherwise walk the postings of most of the dictionary.
const maxCandidates = 64

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

func (e *expander) known(term string) bool {
	if e.err != nil {
		return false
	}
	for _, f := range fieldBoosts {
		tfr, err := e.r.TermFieldReader(e.ctx, []byte(term), f.field, false, false, false)
		if err != nil {
			e.fail(err)
			return false
		}
		n := tfr.Count()
		tfr.Close()
		if n > 0 {
			return true
		}
	}
	return false
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
	var out []string
	for len(out) < maxCandidates {
		d, err := fd.Next()
		if err != nil {
			e.fail(err)
			return nil
		}
		if d == nil {
			break
		}
		if d.Term != prefix {
			out = append(out, d.Term)
		}
	}
	return out
}

func (e *expander) typos(field, term string) []string {
	if e.err != nil {
		return nil
	}
	fz, ok := e.r.(index.IndexReaderFuzzy)
	if !ok { // scorch, the only index type Open accepts, does
		e.fail(fmt.Errorf("index reader %T cannot look up words within a typo", e.r))
		return nil
	}
	fd, err := fz.FieldDictFuzzy(field, term, 1, "")
	if err != nil {
		e.fail(err)
		return nil
	}
	defer fd.Close()
	var found []index.DictEntry
	for {
		d, err := fd.Next()
		if err != nil {
			e.fail(err)
			return nil
		}
		if d == nil {
			break
		}
		found = append(found, *d)
	}
	slices.SortFunc(found, func(a, b index.DictEntry) int {
		return cmp.Or(cmp.Compare(a.EditDistance, b.EditDistance), strings.Compare(a.Term, b.Term))
	})
	out := make([]string, 0, min(len(found), maxCandidates))
	for _, d := range found[:min(len(found), maxCandidates)] {
		out = append(out, d.Term)
	}
	return out
}
