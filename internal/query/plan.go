package query

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/index/scorch"
	index "github.com/blevesearch/bleve_index_api"
	segment "github.com/blevesearch/scorch_segment_api/v2"
)

// How a query is scored. Every word of the query is searched in every field:
// as itself (after stemming), as the start of longer words and, when the
// index does not hold it, as the words within a typo of it. A document
// scores the sum of what matched, scaled by the share of clauses that
// matched (bleve's coordination factor), so documents holding more of the
// words come first; see also aboutAll.
//
// Field boosts state the intended order — a word in a name or title says
// what a document is about; in a description, what it is for; in a body,
// merely that it comes up — but they are a weak lever: TF-IDF's length norm
// already weighs a word in a two-word title far above one in a body. On the
// ranking fixture, boosts from 1/1/1/1 to 8/8/2/1 all gave the same mean
// reciprocal rank (0.94).
var fieldBoosts = [...]struct {
	field string
	boost float64
}{
	{fieldTitle, 4},
	{fieldName, 4},
	{fieldDescription, 2},
	{fieldBody, 1},
}

// snippetFields are the fields snippets are cut from (see snippetOf).
var snippetFields = [...]string{fieldDescription, fieldBody}

const (
	// prefixBoost scales a match on a longer word: "config" finds
	// "configuration", below the documents that say "config".
	prefixBoost = 0.4
	// minPrefixLen keeps one- and two-letter prefixes, which match much of
	// the dictionary, out of the query.
	minPrefixLen = 3
	// fuzzyBoost scales a match within a typo, further divided by 1 + the
	// edit distance, as bleve's own fuzzy query does.
	fuzzyBoost = 0.5
	// phraseBoost rewards documents whose title or description holds the
	// query's words in the query's order, when it was not quoted. Bodies
	// are left out: nearly every body holds two common words, and checking
	// their positions tripled the cost of two-word queries.
	phraseBoost = 2
	// maxExpandedWords bounds how many distinct words of a query are
	// expanded to longer words and typos, each of which walks a term
	// dictionary; further words are searched as they are, so a
	// 1,000-character query stays fast.
	maxExpandedWords = 16
)

// Typos. A word the index holds is taken as meant and never widened: only
// words found in no field are searched with typos. Measured against the two
// alternatives, on the 25 queries of the ranking fixture (8 with typos; mean
// reciprocal rank of the expected hit) and the captest benchmark mix (CPU per
// query):
//
//	per word, only unknown words (this):  MRR 0.94, 1.1 ms
//	every word, blended at a lower boost:  MRR 0.96, 2.2 ms (3.2x on queries without typos)
//	every word, when fewer than 3 hits:   MRR 0.90, 1.3 ms
//
// Blending won one case by the luck of fuzzy noise, at twice the cost, and
// adds hits nobody meant; a per-query fallback misses "serach index", where
// "index" alone finds plenty.
//
// (CPU times taken on a loaded 2-core machine: compare them with each other.)
//
// Distance 1 covers one insertion, deletion, substitution or transposition
// (the automaton counts "serach" -> "search" as one edit). Distance 2 is
// tried only for words of 8 characters or more that nothing within distance 1
// matched ("migraton" -> "migrat"): its automaton costs several times more to
// build, and tried first for every such word it made those queries 2-3x
// slower.
const (
	minFuzzyLen  = 4
	minFuzzy2Len = 8
	// maxFuzzyLen and maxFuzzy2Len bound the words searched with typos at
	// each distance: an automaton grows with its word (distance 2 takes 0.3
	// ms to build for 8 characters, 1.4 ms for 16; vellum refuses one past
	// 10,000 states, which a 1,000-character word reaches). No misspelled
	// English word is longer, and an identifier that long is typed whole.
	maxFuzzyLen  = 32
	maxFuzzy2Len = 16
	// maxTypoWords bounds how many unknown words of one query are searched
	// with typos, so that a query of gibberish stays fast.
	maxTypoWords = 4
	// maxCandidates bounds the terms a typo stands for, per field: a typo
	// means one word, not a hundred.
	maxCandidates = 64
)

// word is one analyzed word of a query.
type word struct {
	term string // stemmed, as the index holds it: "track"
	raw  string // as typed, lower-cased: "tracking"
}

// forms returns what a typo of w is looked for around: the typed form and,
// when it differs, its stem. The stem of a misspelling is often no word at
// all ("taks" stems to "tak"), but the stem of a misspelled inflection is
// close to the indexed stem ("confgiuration" stems to "confgiur", one
// transposition from "configur") while the typed form is far from it.
func (w word) forms() []string {
	if w.raw == w.term {
		return []string{w.raw}
	}
	return []string{w.raw, w.term}
}

// expansion is everything one word of a query matches.
type expansion struct {
	word
	// extend also matches the longer terms that start with term.
	extend bool
	// extensions holds, per field, those longer terms, in byte order: they
	// are looked up while the words are (see extensionsIn), not by a range
	// query at search time.
	extensions map[string][]string
	// typos holds, per field, the terms within a typo of the word, when no
	// field holds the word itself.
	typos map[string][]index.DictEntry
}

// plan is a query made ready to run.
type plan struct {
	// must are the clauses every hit matches: the quoted phrases.
	must []clause
	// should finds and scores the hits, among those of must if any; nil
	// when the query is only phrases.
	should clause
	// kinds restricts the hits to these kinds of document, when not empty.
	kinds []string
	// highlight holds, per snippet field, every term the query may have
	// matched there: the terms to mark in the returned documents.
	highlight map[string][]string
}

// compile turns text into a plan for one snapshot of the index, or nil when
// text holds nothing to search for. Text inside balanced double quotes is a
// phrase every hit must contain; an unbalanced quote is ignored. Everything
// else is plain words: no character has a special meaning, so "+",
// "field:", "*", "~", "^" or "\" cannot make a query fail.
func (x *Index) compile(ctx context.Context, snap *scorch.IndexSnapshot, text string, kinds []string) (*plan, error) {
	// Unicode word breaking keeps letters on both sides of a colon together,
	// so "kind:skill" or a source tag such as "skill:tasks/triage" would be
	// one word that no document holds. Documents that do hold such a word
	// are still found, through the extensions of its first part.
	text = strings.ReplaceAll(text, ":", " ")
	phrases, free := splitPhrases(text)
	p := &plan{kinds: kinds, highlight: make(map[string][]string)}

	for _, ph := range phrases {
		words := x.words(ph)
		if len(words) == 0 {
			continue
		}
		p.must = append(p.must, x.phraseIn(ph, 1, true))
		for _, w := range words {
			p.addHighlights(expansion{word: w})
		}
	}

	words := x.words(free)
	exps, err := x.expand(ctx, snap, words)
	if err != nil {
		return nil, err
	}
	var should []clause
	for _, e := range exps {
		should = append(should, e.rankClause())
		p.addHighlights(e)
	}
	if len(phrases) == 0 && len(words) > 1 {
		should = append(should, x.phraseIn(free, phraseBoost, false))
		if len(words) <= maxExpandedWords {
			should = append(should, aboutAll(exps))
		}
	}
	if len(should) > 0 {
		p.should = &anyOf{of: should}
	}
	if p.must == nil && p.should == nil {
		return nil, nil
	}
	return p, nil
}

// addHighlights adds the terms e matches in the snippet fields.
func (p *plan) addHighlights(e expansion) {
	for _, f := range snippetFields {
		terms := append(p.highlight[f], e.term)
		terms = append(terms, e.extensions[f]...)
		for _, c := range e.typos[f] {
			terms = append(terms, c.Term)
		}
		p.highlight[f] = terms
	}
}

// words returns the distinct analyzed words of text, in order.
func (x *Index) words(text string) []word {
	var out []word
	seen := make(map[string]bool)
	for _, t := range x.analyzer.Analyze([]byte(text)) {
		term := string(t.Term)
		if seen[term] {
			continue
		}
		seen[term] = true
		out = append(out, word{term: term, raw: strings.ToLower(text[t.Start:t.End])})
	}
	return out
}

// expand looks the words up in snap: which ones it holds, and what the
// others may be typos of.
func (x *Index) expand(ctx context.Context, snap *scorch.IndexSnapshot, words []word) ([]expansion, error) {
	exps := make([]expansion, len(words))
	typoWords := 0
	var err error
	for i, w := range words {
		exps[i].word = w
		if i >= maxExpandedWords {
			continue
		}
		exps[i].extend = utf8.RuneCountInString(w.term) >= minPrefixLen
		if exps[i].extend {
			if exps[i].extensions, err = extensionsIn(snap, w.term); err != nil {
				return nil, err
			}
		}
		known, err := holds(ctx, snap, w.term)
		if err != nil {
			return nil, err
		}
		if known || typoWords == maxTypoWords {
			continue
		}
		typoWords++
		for distance := 1; distance <= 2 && exps[i].typos == nil; distance++ {
			if exps[i].typos, err = x.typos(snap, w, distance); err != nil {
				return nil, err
			}
		}
	}
	return exps, nil
}

// holds reports whether some field of the index holds term.
func holds(ctx context.Context, r index.IndexReader, term string) (bool, error) {
	for _, f := range fieldBoosts {
		tfr, err := r.TermFieldReader(ctx, []byte(term), f.field, false, false, false)
		if err != nil {
			return false, fmt.Errorf("search query index: %w", err)
		}
		n := tfr.Count()
		tfr.Close()
		if n > 0 {
			return true, nil
		}
	}
	return false, nil
}

// typos returns, per field, the terms within distance of the forms of w,
// nearest first; nil when there are none.
//
// This is what bleve's fuzzy query does, except that each form's automaton
// is built once and run over the term dictionary of every field: bleve
// builds it again for each field, and building it is most of the cost of a
// typo (four times over, with four fields).
func (x *Index) typos(snap *scorch.IndexSnapshot, w word, distance int) (map[string][]index.DictEntry, error) {
	minLen, maxLen := minFuzzyLen, maxFuzzyLen
	if distance == 2 {
		minLen, maxLen = minFuzzy2Len, maxFuzzy2Len
	}
	found := make(map[string]map[string]uint8) // field -> term -> distance
	for _, form := range w.forms() {
		if n := utf8.RuneCountInString(form); n < minLen || n > maxLen {
			continue
		}
		builder, err := x.levenshtein[distance-1]()
		if err != nil {
			return nil, fmt.Errorf("search query index: %w", err)
		}
		dfa, err := builder.BuildDfa(form, uint8(distance))
		if err != nil {
			return nil, fmt.Errorf("search query index: %w", err)
		}
		for _, f := range fieldBoosts {
			err := eachTerm(snap, f.field, dfa, nil, nil, func(e *index.DictEntry) {
				terms := found[f.field]
				if terms == nil {
					terms = make(map[string]uint8)
					found[f.field] = terms
				}
				if d, ok := terms[e.Term]; !ok || e.EditDistance < d {
					terms[e.Term] = e.EditDistance
				}
			})
			if err != nil {
				return nil, err
			}
		}
	}
	if len(found) == 0 {
		return nil, nil
	}
	out := make(map[string][]index.DictEntry, len(found))
	for field, terms := range found {
		cands := make([]index.DictEntry, 0, len(terms))
		for t, d := range terms {
			cands = append(cands, index.DictEntry{Term: t, EditDistance: d})
		}
		slices.SortFunc(cands, func(a, b index.DictEntry) int {
			return cmp.Or(cmp.Compare(a.EditDistance, b.EditDistance), strings.Compare(a.Term, b.Term))
		})
		out[field] = cands[:min(len(cands), maxCandidates)]
	}
	return out, nil
}

// extensionsIn returns, per field, the terms of snap that start with term
// and are longer, in byte order: the terms a range query from term to the
// first string past its prefix would match, with term itself left out.
//
// A bleve range query does the same, but its field dictionary starts a
// goroutine per segment and field to do it, for what is usually no term at
// all. Walking the dictionaries here, in the snapshot the typos are looked
// up in, costs a fraction of that.
func extensionsIn(snap *scorch.IndexSnapshot, term string) (map[string][]string, error) {
	end := prefixEnd(term)
	if end == nil {
		return nil, nil
	}
	var out map[string][]string
	for _, f := range fieldBoosts {
		var terms []string
		err := eachTerm(snap, f.field, nil, []byte(term), end, func(e *index.DictEntry) {
			if e.Term != term {
				terms = append(terms, e.Term)
			}
		})
		if err != nil {
			return nil, err
		}
		if len(terms) == 0 {
			continue
		}
		// Several segments may hold the same term.
		slices.Sort(terms)
		terms = slices.Compact(terms)
		if out == nil {
			out = make(map[string][]string)
		}
		out[f.field] = terms
	}
	return out, nil
}

// prefixEnd returns the first string past every string that starts with
// term, or nil when term ends in 0xff bytes, which no UTF-8 word does.
func prefixEnd(term string) []byte {
	end := []byte(term)
	for len(end) > 0 && end[len(end)-1] == 0xff {
		end = end[:len(end)-1]
	}
	if len(end) == 0 {
		return nil
	}
	end[len(end)-1]++
	return end
}

// eachTerm calls visit with every term of field, in each segment of snap,
// that a accepts (any term when a is nil) from start (inclusive, nil for
// the first) to end (exclusive, nil for past the last). The walk does not
// read the terms' postings when the segment allows it (zap does), as bleve
// does for its own fuzzy queries.
func eachTerm(snap *scorch.IndexSnapshot, field string, a segment.Automaton, start, end []byte, visit func(*index.DictEntry)) error {
	type omitCount interface {
		AutomatonIteratorOmitCount(a segment.Automaton, start, end []byte) segment.DictionaryIterator
	}
	for _, seg := range snap.Segments() {
		dict, err := seg.Segment().Dictionary(field)
		if err != nil {
			return fmt.Errorf("search query index: %w", err)
		}
		var it segment.DictionaryIterator
		if oc, ok := dict.(omitCount); ok {
			it = oc.AutomatonIteratorOmitCount(a, start, end)
		} else {
			it = dict.AutomatonIterator(a, start, end)
		}
		for {
			e, err := it.Next()
			if err != nil {
				return fmt.Errorf("search query index: %w", err)
			}
			if e == nil {
				break
			}
			visit(e)
		}
	}
	return nil
}

// rankClause matches e in every field, one clause per field and kind of
// match, so that how many typo candidates a word has does not change its
// weight against the other words.
func (e *expansion) rankClause() clause {
	var cs []clause
	for _, f := range fieldBoosts {
		cs = append(cs, &termOf{term: e.term, field: f.field, boost: f.boost})
		if e.extend {
			cs = append(cs, extensionsOf(e.extensions[f.field], f.field, f.boost*prefixBoost))
		}
		if cands := e.typos[f.field]; len(cands) > 0 {
			typos := make([]clause, len(cands))
			for i, c := range cands {
				typos[i] = &termOf{term: c.Term, field: f.field, boost: f.boost * fuzzyBoost / float64(1+c.EditDistance)}
			}
			cs = append(cs, &anyOf{of: typos})
		}
	}
	return &anyOf{of: cs}
}

// aboutAll matches the documents whose short fields — title, name,
// description — hold every word of a query (or a typo's candidate), each in
// any of them.
//
// Without it, a capability wins most queries of several words with one of
// them: it holds that word in its title, name, description and types at
// once, and scores sum over fields. On the ranking fixture, "task priority"
// found the tasks capability before the triage skill described as "Sort
// incoming tasks by priority". The clause raised the mean reciprocal rank of
// the expected hit over 17 queries from 0.84 to 0.94. Bodies are left out:
// with them the clause ranked the same and cost 0.6 ms more per two-word
// query on the captest corpus, where every body holds every common word.
//
// (It was measured as a bleve conjunction query with a boost of 2, which
// bleve ignores on conjunctions: the clause has no boost of its own.)
func aboutAll(exps []expansion) clause {
	all := make([]clause, len(exps))
	for i, e := range exps {
		var fs []clause
		for _, f := range fieldBoosts {
			if f.field == fieldBody {
				continue
			}
			fs = append(fs, &termOf{term: e.term, field: f.field, boost: f.boost})
			for _, c := range e.typos[f.field] {
				fs = append(fs, &termOf{term: c.Term, field: f.field, boost: f.boost * fuzzyBoost / float64(1+c.EditDistance)})
			}
		}
		all[i] = &anyOf{of: fs}
	}
	return &allOf{of: all}
}

// phraseIn matches text as a phrase in titles, descriptions and, when
// bodies is set, bodies. Names are too short to hold a phrase worth scoring.
func (x *Index) phraseIn(text string, boost float64, bodies bool) clause {
	terms := x.phraseTerms(text)
	var cs []clause
	for _, f := range fieldBoosts {
		if f.field == fieldName || (f.field == fieldBody && !bodies) {
			continue
		}
		if len(terms) == 0 {
			cs = append(cs, none{})
			continue
		}
		cs = append(cs, &phrase{field: f.field, terms: terms, boost: f.boost * boost})
	}
	return &anyOf{of: cs}
}

// phraseTerms returns the analyzed terms of text by position, from the
// first to the last, with "" where the analyzer dropped a word. The
// analyzer puts one term at each position.
func (x *Index) phraseTerms(text string) []string {
	tokens := x.analyzer.Analyze([]byte(text))
	if len(tokens) == 0 {
		return nil
	}
	first, last := tokens[0].Position, tokens[0].Position
	for _, t := range tokens {
		first, last = min(first, t.Position), max(last, t.Position)
	}
	terms := make([]string, last-first+1)
	for _, t := range tokens {
		terms[t.Position-first] = string(t.Term)
	}
	return terms
}

// extensionsOf matches terms, the longer words that start with a word of
// the query (see extensionsIn), in field, or nothing when there are none:
// the word's coordination counts the clause either way. A prefix query
// would match the word itself too, and so walk the postings of the exact
// match a second time.
func extensionsOf(terms []string, field string, boost float64) clause {
	if len(terms) == 0 {
		return none{}
	}
	cs := make([]clause, len(terms))
	for i, t := range terms {
		cs[i] = &termOf{term: t, field: field, boost: boost}
	}
	return &anyOf{of: cs}
}

// splitPhrases returns the phrases between balanced double quotes, and the
// rest of text. When the quotes are odd in number, the last one is left out
// of the pairing and read as a space.
func splitPhrases(text string) (phrases []string, rest string) {
	if !strings.Contains(text, `"`) {
		return nil, text
	}
	parts := strings.Split(text, `"`)
	pairs := strings.Count(text, `"`) / 2
	var b strings.Builder
	for i, p := range parts {
		if i%2 == 1 && i < 2*pairs {
			if strings.TrimSpace(p) != "" {
				phrases = append(phrases, p)
			}
			b.WriteByte(' ')
			continue
		}
		b.WriteString(p)
		b.WriteByte(' ')
	}
	return phrases, b.String()
}
