package query

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/blevesearch/bleve/v2/index/scorch"
	index "github.com/blevesearch/bleve_index_api"
)

// Scoring. A compiled query is a tree of clauses evaluated over the postings
// of one index snapshot, read through bleve's own term field readers. The
// scores are bleve's TF-IDF, computed as its searchers compute them:
//
//	term:        √freq · norm · idf · (boost · idf · queryNorm)
//	             idf = 1 + ln(docs / (docs holding the term + 1))
//	             queryNorm = 1 / √Σ(boost · idf)² over every term of the query
//	any-of:      Σ matched clauses · matched / clauses (coordination)
//	all-of:      Σ clauses, when every one matched
//	phrase:      Σ its terms, when they stand in order
//
// TestScoresMatchBleve runs the same trees as bleve queries and compares
// every score. The point of scoring here is cost, not a different ranking:
// bleve builds a searcher per clause and a pooled DocumentMatch per posting,
// merged through heaps at every level of the tree, which took 60% of a
// query; reading the postings and merging sorted slices takes a fraction.

// match is a document a clause matched, by its number in the snapshot.
type match struct {
	doc   uint64
	score float64
	// n counts the clauses of an anyOf or allOf that matched doc.
	n int
}

// clause is a node of a compiled query.
type clause interface {
	// prepare opens what the clause reads and adds its terms' weights to
	// s.weight, from which s.norm is computed before eval.
	prepare(s *scorer) error
	// eval returns the documents the clause matches, in document order.
	eval(s *scorer) ([]match, error)
}

// scorer evaluates clauses over one snapshot.
type scorer struct {
	ctx      context.Context
	snap     *scorch.IndexSnapshot
	docTotal uint64
	weight   float64
	norm     float64
	readers  []index.TermFieldReader
	// free holds match lists no clause uses any more, for the next ones:
	// merging the lists of a query's clauses would otherwise allocate
	// several times the postings it reads.
	free [][]match
}

// freeLists keeps the lists of finished searches for the next ones.
var freeLists sync.Pool

func newScorer(ctx context.Context, snap *scorch.IndexSnapshot) (*scorer, error) {
	n, err := snap.DocCount()
	if err != nil {
		return nil, fmt.Errorf("search query index: %w", err)
	}
	s := &scorer{ctx: ctx, snap: snap, docTotal: n}
	if free, ok := freeLists.Get().(*[][]match); ok {
		s.free = *free
	}
	return s, nil
}

// list returns an empty match list with room for n matches.
func (s *scorer) list(n int) []match {
	for i := len(s.free) - 1; i >= 0; i-- {
		if l := s.free[i]; cap(l) >= n {
			s.free = slices.Delete(s.free, i, i+1)
			return l[:0]
		}
	}
	return make([]match, 0, max(n, 64))
}

// release hands back lists that nothing reads any more.
func (s *scorer) release(ls ...[]match) {
	for _, l := range ls {
		if cap(l) > 0 {
			s.free = append(s.free, l)
		}
	}
}

// open returns a reader of the postings of term in field, closed by close.
func (s *scorer) open(term, field string, positions bool) (index.TermFieldReader, error) {
	if err := s.ctx.Err(); err != nil {
		return nil, err
	}
	r, err := s.snap.TermFieldReader(s.ctx, []byte(term), field, true, true, positions)
	if err != nil {
		return nil, fmt.Errorf("search query index: %w", err)
	}
	s.readers = append(s.readers, r)
	return r, nil
}

// close closes the readers and keeps the lists for the next search: the
// matches s returned must not be read after it.
func (s *scorer) close() {
	for _, r := range s.readers {
		r.Close()
	}
	s.readers = nil
	if len(s.free) > 0 {
		free := s.free
		s.free = nil
		freeLists.Put(&free)
	}
}

// run prepares and evaluates a query: the documents that match every one of
// must (when there are any) and, among those, any of should, scored by both;
// only documents of the given kinds when kinds is not empty.
func (s *scorer) run(must []clause, should clause, kinds []string) ([]match, error) {
	var all clause
	if len(must) > 0 {
		all = &allOf{of: must}
	}
	for _, c := range []clause{all, should} {
		if c == nil {
			continue
		}
		if err := c.prepare(s); err != nil {
			return nil, err
		}
	}
	s.norm = 1 / math.Sqrt(s.weight)

	var ms []match
	var err error
	switch {
	case all != nil && should != nil:
		var req, opt []match
		if req, err = all.eval(s); err != nil {
			return nil, err
		}
		if opt, err = should.eval(s); err != nil {
			return nil, err
		}
		ms = addTo(req, opt)
		s.release(opt)
	case all != nil:
		ms, err = all.eval(s)
	case should != nil:
		ms, err = should.eval(s)
	}
	if err != nil || len(kinds) == 0 {
		return ms, err
	}
	return s.filterKinds(ms, kinds)
}

// filterKinds keeps the matches whose document is of one of kinds.
func (s *scorer) filterKinds(ms []match, kinds []string) ([]match, error) {
	keep := make(map[uint64]bool)
	for _, k := range kinds {
		r, err := s.open(k, fieldKind, false)
		if err != nil {
			return nil, err
		}
		var tfd index.TermFieldDoc
		for {
			d, err := r.Next(&tfd)
			if err != nil {
				return nil, fmt.Errorf("search query index: %w", err)
			}
			if d == nil {
				break
			}
			keep[d.ID.Value()] = true
		}
	}
	return slices.DeleteFunc(ms, func(m match) bool { return !keep[m.doc] }), nil
}

// termOf matches a term in a field.
type termOf struct {
	term, field string
	boost       float64
	// positions makes eval record where the term stands (see phrase).
	positions bool

	reader index.TermFieldReader
	idf    float64
	// at holds, after eval with positions, the term's positions in each
	// matched document, in the order of the matches.
	at [][]uint64
}

func (t *termOf) prepare(s *scorer) error {
	r, err := s.open(t.term, t.field, t.positions)
	if err != nil {
		return err
	}
	t.reader = r
	t.idf = 1 + math.Log(float64(s.docTotal)/float64(r.Count()+1))
	w := t.boost * t.idf
	s.weight += w * w
	return nil
}

func (t *termOf) eval(s *scorer) ([]match, error) {
	out := s.list(int(t.reader.Count()))
	weight := t.boost * t.idf * s.norm
	var tfd index.TermFieldDoc
	for {
		d, err := t.reader.Next(&tfd)
		if err != nil {
			return nil, fmt.Errorf("search query index: %w", err)
		}
		if d == nil {
			break
		}
		// In bleve's order of operations, so that equal documents score
		// exactly alike.
		score := math.Sqrt(float64(d.Freq)) * d.Norm * t.idf
		if weight != 1 {
			score *= weight
		}
		out = append(out, match{doc: d.ID.Value(), score: score, n: 1})
		if t.positions {
			at := make([]uint64, len(d.Vectors))
			for i, v := range d.Vectors {
				at[i] = v.Pos
			}
			t.at = append(t.at, at)
		}
	}
	return out, nil
}

// anyOf matches what any of its clauses match, scaled by the share of them
// that matched.
type anyOf struct{ of []clause }

func (a *anyOf) prepare(s *scorer) error { return prepareAll(s, a.of) }

func (a *anyOf) eval(s *scorer) ([]match, error) {
	acc, err := evalAll(s, a.of, s.union)
	for i := range acc {
		acc[i].score *= float64(acc[i].n) / float64(len(a.of))
		acc[i].n = 1
	}
	return acc, err
}

// allOf matches what every one of its clauses matches.
type allOf struct{ of []clause }

func (a *allOf) prepare(s *scorer) error { return prepareAll(s, a.of) }

func (a *allOf) eval(s *scorer) ([]match, error) {
	acc, err := evalAll(s, a.of, func(acc, ms []match) []match {
		acc = intersect(acc, ms)
		s.release(ms)
		return acc
	})
	for i := range acc {
		acc[i].n = 1
	}
	return acc, err
}

func prepareAll(s *scorer, cs []clause) error {
	for _, c := range cs {
		if err := c.prepare(s); err != nil {
			return err
		}
	}
	return nil
}

// evalAll evaluates cs in order and folds their matches into the first
// clause's with merge. Every clause returns its matches with n = 1.
func evalAll(s *scorer, cs []clause, merge func(acc, ms []match) []match) ([]match, error) {
	var acc []match
	for i, c := range cs {
		ms, err := c.eval(s)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			acc = ms
			continue
		}
		acc = merge(acc, ms)
	}
	return acc, nil
}

// none matches nothing. It stands for a clause of terms the index does not
// hold, which still counts among the clauses of an anyOf, as in bleve.
type none struct{}

func (none) prepare(*scorer) error         { return nil }
func (none) eval(*scorer) ([]match, error) { return nil, nil }

// phrase matches its terms in a field, in order: the term at index i of
// terms stands i positions after the first. An empty term is a word the
// analyzer dropped (a stop word), which any word fills.
type phrase struct {
	field string
	terms []string
	boost float64

	parts   []*termOf
	offsets []int
}

func (p *phrase) prepare(s *scorer) error {
	for i, t := range p.terms {
		if t == "" {
			continue
		}
		part := &termOf{term: t, field: p.field, boost: p.boost, positions: true}
		if err := part.prepare(s); err != nil {
			return err
		}
		p.parts = append(p.parts, part)
		p.offsets = append(p.offsets, i)
	}
	return nil
}

func (p *phrase) eval(s *scorer) ([]match, error) {
	if len(p.parts) == 0 {
		return nil, nil
	}
	lists := make([][]match, len(p.parts))
	for i, part := range p.parts {
		ms, err := part.eval(s)
		if err != nil {
			return nil, err
		}
		lists[i] = ms
	}
	// Walk the lists together, as an intersection that keeps each list's
	// index for the positions.
	defer s.release(lists...)
	idx := make([]int, len(lists))
	out := s.list(0)
	for idx[0] < len(lists[0]) {
		doc := lists[0][idx[0]].doc
		all := true
		for i := 1; i < len(lists); i++ {
			for idx[i] < len(lists[i]) && lists[i][idx[i]].doc < doc {
				idx[i]++
			}
			if idx[i] == len(lists[i]) {
				return out, nil
			}
			if lists[i][idx[i]].doc != doc {
				all = false
			}
		}
		if all && p.inOrder(idx) {
			m := match{doc: doc, n: 1}
			for i, l := range lists {
				m.score += l[idx[i]].score
			}
			out = append(out, m)
		}
		idx[0]++
	}
	return out, nil
}

// inOrder reports whether the parts, at the matches idx, stand at their
// offsets from one another somewhere in the document.
func (p *phrase) inOrder(idx []int) bool {
	for _, start := range p.parts[0].at[idx[0]] {
		ok := true
		for i := 1; i < len(p.parts) && ok; i++ {
			want := start + uint64(p.offsets[i]-p.offsets[0])
			ok = slices.Contains(p.parts[i].at[idx[i]], want)
		}
		if ok {
			return true
		}
	}
	return false
}

// union merges b into a, both in document order and handed over by the
// caller: scores of the same document add up and n counts the lists that
// matched it. b's matches have n = 1, as every clause's do.
func (s *scorer) union(a, b []match) []match {
	if len(a) == 0 {
		s.release(a)
		return b
	}
	if len(b) == 0 {
		s.release(b)
		return a
	}
	defer s.release(a, b)
	out := s.list(len(a) + len(b))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i].doc < b[j].doc:
			out = append(out, a[i])
			i++
		case a[i].doc > b[j].doc:
			out = append(out, b[j])
			j++
		default:
			out = append(out, match{doc: a[i].doc, score: a[i].score + b[j].score, n: a[i].n + 1})
			i++
			j++
		}
	}
	out = append(out, a[i:]...)
	return append(out, b[j:]...)
}

// intersect keeps the documents of a that b matches too, with both scores.
func intersect(a, b []match) []match {
	out := a[:0]
	j := 0
	for _, m := range a {
		for j < len(b) && b[j].doc < m.doc {
			j++
		}
		if j == len(b) {
			break
		}
		if b[j].doc == m.doc {
			m.score += b[j].score
			m.n++
			out = append(out, m)
		}
	}
	return out
}

// addTo returns the matches of req, with the score of the same document in
// opt added when opt matched it.
func addTo(req, opt []match) []match {
	j := 0
	for i := range req {
		for j < len(opt) && opt[j].doc < req[i].doc {
			j++
		}
		if j < len(opt) && opt[j].doc == req[i].doc {
			req[i].score += opt[j].score
		}
	}
	return req
}

// ranked is a document of a page of results.
type ranked struct {
	doc   uint64
	id    string
	score float64
}

// best returns the limit best of ms, by score then id: ids are read only for
// the documents that can make the page.
func (s *scorer) best(ms []match, limit int) ([]ranked, error) {
	if len(ms) == 0 {
		return nil, nil
	}
	// The limit-th best score: every document above it is on the page, and
	// those at it compete by id.
	floor := kthScore(ms, limit)
	var page []ranked
	for _, m := range ms {
		if m.score >= floor {
			page = append(page, ranked{doc: m.doc, score: m.score})
		}
	}
	var buf []byte
	for i := range page {
		id, err := s.snap.ExternalID(index.NewIndexInternalID(buf, page[i].doc))
		if err != nil {
			return nil, fmt.Errorf("search query index: %w", err)
		}
		page[i].id = id
	}
	slices.SortFunc(page, func(a, b ranked) int {
		return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(a.id, b.id))
	})
	return page[:min(limit, len(page))], nil
}

// kthScore returns the k-th highest score of ms (the lowest when there are
// fewer than k), with a min-heap of the k best.
func kthScore(ms []match, k int) float64 {
	if k >= len(ms) {
		k = len(ms)
	}
	heap := make([]float64, 0, k)
	for _, m := range ms {
		switch {
		case len(heap) < k:
			heap = append(heap, m.score)
			for i := len(heap) - 1; i > 0; {
				parent := (i - 1) / 2
				if heap[parent] <= heap[i] {
					break
				}
				heap[parent], heap[i] = heap[i], heap[parent]
				i = parent
			}
		case m.score > heap[0]:
			heap[0] = m.score
			for i := 0; ; {
				l, r, least := 2*i+1, 2*i+2, i
				if l < k && heap[l] < heap[least] {
					least = l
				}
				if r < k && heap[r] < heap[least] {
					least = r
				}
				if least == i {
					break
				}
				heap[least], heap[i] = heap[i], heap[least]
				i = least
			}
		}
	}
	return heap[0]
}
