package query

import (
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/search/query"
)

// How a query is scored: by bleve's own searchers (TF-IDF, with the
// coordination factor of disjunctions), over the clauses compiled here.
// Every word of the query is searched in every field as written, as its
// stem, as the start of longer words and as the words one typo away from
// it; the document scores the sum of what matched, scaled by the share of
// the words it matched, so documents holding more of the words come first.
//
// Field boosts state the intended order — a word in a name or title says
// what a document is about; in a description, what it is for; in a body,
// merely that it comes up. TF-IDF's length norm already weighs a word in a
// two-word title far above one in a body.
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

// matchFields are the fields whose term locations say which words a hit
// matched: the stored ones, which have term vectors.
var matchFields = [...]string{fieldTitle, fieldDescription, fieldBody}

const (
	// exactBoost scales a match on the word as written over a match on its
	// stem, which the word's other forms share: a doc that says the rare
	// "rendering" comes before the many that say "render".
	exactBoost = 1.5
	// prefixBoost scales a match on a longer word: "config" finds
	// "configuration", below the documents that say "config". The longer
	// word keeps its own, often much higher, inverse document frequency,
	// so "build" still finds the one doc about "builders" among many that
	// say "build".
	prefixBoost = 0.4
	// minPrefixLen keeps one- and two-letter prefixes, which match much of
	// the dictionary, out of the query.
	minPrefixLen = 3
	// fuzzyBoost scales a match within one typo (an insertion, deletion,
	// substitution or swap of neighbours) of the word as written.
	fuzzyBoost = 0.5
	// minFuzzyLen and maxFuzzyLen bound the words searched with typos: a
	// typo of a short word is another word, and an automaton grows with
	// its word (vellum refuses one past 10,000 states).
	minFuzzyLen = 4
	maxFuzzyLen = 32
	// maxTypoWords bounds how many unknown words of one query are searched
	// with typos, so that a query of gibberish stays fast.
	maxTypoWords = 4
	// partsBoost scales a match on the parts of an identifier the query
	// holds ("addTask": add, task) below a match on the identifier.
	partsBoost = 0.1
	// maxExpandedWords bounds how many words of a query are expanded to
	// longer words and typos, each of which walks a term dictionary per
	// field; further words are searched as they are, so a 1,000-character
	// query stays fast.
	maxExpandedWords = 8
	// maxAnywherePostings bounds the postings of the rarest word of a
	// query for which documents holding all its words anywhere score more
	// (see aboutAll): about 0.1 ms of walking at most. allWordsBoost is how
	// much more: enough that such a document comes before one holding a
	// word in its title (BenchmarkRecall has the figures that set it).
	maxAnywherePostings = 128
	allWordsBoost       = 10
)

// word is one analyzed word of a query.
type word struct {
	raw  string // as typed, lower-cased: "tracking"
	stem string // its stem: "track"
	// prefix and typo widen the word to the longer words it starts and to
	// the words within one typo of it.
	prefix, typo bool
}

// group is the word at one position of a query, with its parts when it is
// a code identifier ("parseConfig": parse, config).
type group struct {
	whole word
	parts []word
}

// plan is a query made ready to run.
type plan struct {
	query query.Query
	// literal holds the terms the query names as such: its words as
	// written and their stems. A hit's other matched terms came from a
	// typo or a prefix.
	literal map[string]bool
	// located holds, per field of matchFields, every term the query may
	// have matched there: the terms whose locations are read for the
	// returned hits. Nil when the query widens words with bleve's own
	// prefix and fuzzy queries, whose terms are known only to bleve.
	located map[string][]string
}

// dictionary is what a query's words are looked up in: the term
// dictionaries of one reader of the index (see expander). With none, words
// are widened by bleve's own prefix and fuzzy queries.
type dictionary interface {
	// postings returns how many postings term has over all fields, 0
	// when no field holds it, or any number above enough once it has
	// counted more than enough.
	postings(term string, enough int) int
	// extensions returns terms of field that start with prefix and are
	// longer, in byte order: those with the most postings when there are
	// many (see maxExtensions).
	extensions(field, prefix string) []string
	// typos returns the terms within one typo of term, nearest first.
	typos(term string) []string
}

// compile turns text into a plan, or nil when text holds nothing to search
// for. Text inside balanced double quotes is a phrase every hit must
// contain; an unbalanced quote is ignored. Everything else is plain words:
// no character has a special meaning, so "+", "field:", "*", "~", "^" or
// "\" cannot make a query fail.
func (x *Index) compile(text string, kinds []string, dict dictionary) *plan {
	// Unicode word breaking keeps letters on both sides of a colon together,
	// so "kind:skill" or a source tag such as "skill:tasks/triage" would be
	// one word that no document holds.
	text = strings.ReplaceAll(text, ":", " ")
	phrases, free := splitPhrases(text)
	c := &compiler{dict: dict, plan: plan{literal: make(map[string]bool)}}
	if dict != nil {
		c.located = make(map[string][]string)
	}

	var must []query.Query
	for _, ph := range phrases {
		groups := x.groups(ph)
		if len(groups) == 0 {
			continue
		}
		c.addLiterals(groups)
		must = append(must, phraseIn(ph, fieldTitle, fieldDescription, fieldBody))
	}

	groups := x.groups(free)
	c.addLiterals(groups)
	var should []query.Query
	typoWords := 0
	// anywhere is whether to add aboutAll's clause with bodies: when every
	// word stands in the index as written, and the rarest has few postings.
	anywhere, rarest := true, math.MaxInt
	for i := range groups {
		g := &groups[i]
		if i < maxExpandedWords {
			g.whole.prefix = true
			// A word the index holds is taken as meant: widening it to
			// its typos would add their documents, and cost a Levenshtein
			// automaton per field. So is a word that begins longer ones,
			// as their start. An identifier the index holds is searched
			// as such: its parts would find documents that merely hold
			// one of them.
			n := c.postings(g.whole.raw, maxAnywherePostings)
			if n > 0 {
				g.parts = nil
				if g.whole.stem != g.whole.raw && n <= maxAnywherePostings && len(groups) > 1 {
					n += c.postings(g.whole.stem, maxAnywherePostings)
				}
				rarest = min(rarest, n)
			} else {
				anywhere = false
				if letters := utf8.RuneCountInString(g.whole.raw); typoWords < maxTypoWords && letters >= minFuzzyLen && letters <= maxFuzzyLen && !c.beginsLongerWords(g.whole.raw) {
					g.whole.typo = true
					typoWords++
				}
			}
		}
		should = append(should, c.group(*g))
	}
	// Unquoted words are not searched as a phrase too: it found nothing
	// more, at a cost (BenchmarkSearch says how much).
	if len(phrases) == 0 && len(groups) > 1 && len(groups) <= maxExpandedWords {
		should = append(should, c.aboutAll(groups, false))
		if anywhere && rarest <= maxAnywherePostings {
			should = append(should, c.aboutAll(groups, true))
		}
	}

	var q query.Query
	switch {
	case len(must) == 0 && len(should) == 0:
		return nil
	case len(must) == 0:
		q = anyOf(should)
	case len(should) == 0:
		q = query.NewConjunctionQuery(must)
	default:
		// The words rank the documents that hold every phrase.
		q = query.NewBooleanQuery(must, should, nil)
	}
	if len(kinds) > 0 {
		ks := make([]query.Query, len(kinds))
		for i, k := range kinds {
			ks[i] = termQuery(k, fieldKind, 1)
		}
		b := query.NewBooleanQuery([]query.Query{q}, nil, nil)
		b.AddFilter(anyOf(ks))
		q = b
	}
	c.query = q
	for f, terms := range c.located {
		slices.Sort(terms)
		c.located[f] = slices.Compact(terms)
	}
	return &c.plan
}

// compiler builds one plan.
type compiler struct {
	plan
	dict      dictionary
	typoCache map[string][]string
	extCache  map[[2]string][]string
}

// extensions returns what dict.extensions does, looked up once per field
// and word.
func (c *compiler) extensions(field, prefix string) []string {
	key := [2]string{field, prefix}
	if ts, ok := c.extCache[key]; ok {
		return ts
	}
	if c.extCache == nil {
		c.extCache = make(map[[2]string][]string)
	}
	ts := c.dict.extensions(field, prefix)
	c.extCache[key] = ts
	return ts
}

// beginsLongerWords reports whether some field holds a longer word that
// starts with w.
func (c *compiler) beginsLongerWords(w string) bool {
	if c.dict == nil || utf8.RuneCountInString(w) < minPrefixLen {
		return false
	}
	for _, f := range fieldBoosts {
		if len(c.extensions(f.field, w)) > 0 {
			return true
		}
	}
	return false
}

// typos returns what dict.typos does, looked up once per word.
func (c *compiler) typos(term string) []string {
	if ts, ok := c.typoCache[term]; ok {
		return ts
	}
	if c.typoCache == nil {
		c.typoCache = make(map[string][]string)
	}
	ts := c.dict.typos(term)
	c.typoCache[term] = ts
	return ts
}

func (c *compiler) postings(term string, enough int) int {
	if c.dict == nil {
		return 0
	}
	return c.dict.postings(term, enough)
}

func (c *compiler) addLiterals(groups []group) {
	for _, g := range groups {
		for _, w := range append([]word{g.whole}, g.parts...) {
			c.literal[w.raw] = true
			c.literal[w.stem] = true
			if c.located != nil {
				for _, f := range matchFields {
					c.located[f] = append(c.located[f], w.raw, w.stem)
				}
			}
		}
	}
}

// groups returns the distinct analyzed words of text, in order, each with
// its parts.
func (x *Index) groups(text string) []group {
	var out []group
	seen := make(map[string]bool)
	pos := -1
	for _, t := range x.analyzer.Analyze([]byte(text)) {
		w := word{raw: string(t.Term), stem: string(stem(t.Term))}
		if t.Position == pos { // a part of the word before
			if len(out) > 0 {
				g := &out[len(out)-1]
				g.parts = append(g.parts, w)
			}
			continue
		}
		pos = t.Position
		if seen[w.raw] {
			pos = -2 // and skip its parts
			continue
		}
		seen[w.raw] = true
		out = append(out, group{whole: w})
	}
	return out
}

// group matches g's word, or else all of its parts.
func (c *compiler) group(g group) query.Query {
	whole := c.word(g.whole, 1)
	if len(g.parts) == 0 {
		return whole
	}
	parts := make([]query.Query, len(g.parts))
	for i, w := range g.parts {
		parts[i] = c.word(w, partsBoost)
	}
	return anyOf([]query.Query{whole, query.NewConjunctionQuery(parts)})
}

// word matches w in every field, at the field's boost times boost.
func (c *compiler) word(w word, boost float64) query.Query {
	var cs []query.Query
	for _, f := range fieldBoosts {
		cs = append(cs, c.wordIn(w, f.field, f.boost*boost, w.prefix)...)
	}
	return anyOf(cs)
}

// wordIn returns the clauses that match w in field: as written, as its
// stem, when prefix is set as the start of a longer word, and when w.typo
// is set within one typo.
func (c *compiler) wordIn(w word, field string, boost float64, prefix bool) []query.Query {
	cs := []query.Query{termQuery(w.raw, field, boost*exactBoost)}
	if w.stem != w.raw {
		cs = append(cs, termQuery(w.stem, field, boost))
	}
	if prefix && utf8.RuneCountInString(w.raw) >= minPrefixLen {
		if c.dict == nil {
			pq := query.NewPrefixQuery(w.raw)
			pq.SetField(field)
			pq.SetBoost(boost * prefixBoost)
			cs = append(cs, pq)
		} else {
			// A longer word of the same stem is matched by the stem
			// already ("tasks" for "task").
			terms := slices.DeleteFunc(slices.Clone(c.extensions(field, w.raw)), func(t string) bool {
				return string(stem([]byte(t))) == w.stem
			})
			cs = c.anyTerm(cs, terms, field, boost*prefixBoost)
		}
	}
	if w.typo {
		if c.dict == nil {
			fq := query.NewFuzzyQuery(w.raw)
			fq.SetField(field)
			fq.SetFuzziness(1)
			fq.SetBoost(boost * fuzzyBoost)
			cs = append(cs, fq)
		} else {
			cs = c.anyTerm(cs, c.typos(w.raw), field, boost*fuzzyBoost)
		}
	}
	return cs
}

// anyTerm appends to cs one clause matching any of terms in field, as
// bleve's prefix and fuzzy queries do: how many terms a word stands for
// does not change its weight against the other words. Nothing is appended
// when there are no terms.
func (c *compiler) anyTerm(cs []query.Query, terms []string, field string, boost float64) []query.Query {
	if len(terms) == 0 {
		return cs
	}
	any := make([]query.Query, len(terms))
	for i, t := range terms {
		any[i] = termQuery(t, field, boost)
	}
	if c.located != nil && slices.Contains(matchFields[:], field) {
		c.located[field] = append(c.located[field], terms...)
	}
	return append(cs, anyOf(any))
}

// aboutAll matches the documents whose short fields — title, name,
// description — hold every word of a query (or a typo of it), each in any
// of them. Without it, a capability wins most queries of several words with
// one of them: it holds that word in its title, name, description and types
// at once, and scores sum over fields ("task priority" found the tasks
// capability before the triage skill described as "Sort incoming tasks by
// priority"). Bodies are left out: every body holds every common word.
//
// With anywhere set, the words may stand in any field, bodies included,
// at allWordsBoost: a long section that holds two rare words of a query
// then comes before the short ones that hold one of them, or its stem, in
// a title ("statuses responded" found three sections titled "Status" or
// "Responded" before the one that said both). bleve walks such a
// conjunction at the pace of its rarest word, so compile adds it only when
// that word has few postings (maxAnywherePostings): a query of common
// words would walk them all again, for little, as most documents that hold
// one of them hold all.
func (c *compiler) aboutAll(groups []group, anywhere bool) query.Query {
	all := make([]query.Query, len(groups))
	for i, g := range groups {
		var cs []query.Query
		for _, f := range fieldBoosts {
			if anywhere {
				cs = append(cs, c.wordIn(g.whole, f.field, f.boost*allWordsBoost, false)...)
			} else if f.field != fieldBody {
				cs = append(cs, c.wordIn(g.whole, f.field, f.boost, false)...)
			}
		}
		all[i] = anyOf(cs)
	}
	return query.NewConjunctionQuery(all)
}

// anyOf matches what any of qs match, scaled by the share of them that
// matched (bleve's disjunction). One query is returned as it is, with the
// same scores, and without a level of searchers to walk.
func anyOf(qs []query.Query) query.Query {
	if len(qs) == 1 {
		return qs[0]
	}
	return query.NewDisjunctionQuery(qs)
}

func termQuery(term, field string, boost float64) query.Query {
	q := query.NewTermQuery(term)
	q.SetField(field)
	q.SetBoost(boost)
	return q
}

// phraseIn matches text as a phrase in any of fields, each at its boost.
// Each position of the phrase matches the word as written, its stem, or a
// part of it.
func phraseIn(text string, fields ...string) query.Query {
	var cs []query.Query
	for _, f := range fieldBoosts {
		if slices.Contains(fields, f.field) {
			q := query.NewMatchPhraseQuery(text)
			q.SetField(f.field)
			q.Analyzer = textAnalyzer
			q.SetBoost(f.boost)
			cs = append(cs, q)
		}
	}
	return anyOf(cs)
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
