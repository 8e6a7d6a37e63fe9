package query

import (
	"fmt"
	"math"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"
)

// bleveQuery is the bleve query whose searchers compute what c computes.
func bleveQuery(c clause) query.Query {
	switch c := c.(type) {
	case *termOf:
		return termQuery(c.term, c.field, c.boost)
	case *anyOf:
		qs := make([]query.Query, len(c.of))
		for i, sub := range c.of {
			qs[i] = bleveQuery(sub)
		}
		return query.NewDisjunctionQuery(qs)
	case *allOf:
		qs := make([]query.Query, len(c.of))
		for i, sub := range c.of {
			qs[i] = bleveQuery(sub)
		}
		return query.NewConjunctionQuery(qs)
	case *phrase:
		// What a match phrase query of the same text builds.
		terms := make([][]string, len(c.terms))
		for i, t := range c.terms {
			if t != "" {
				terms[i] = []string{t}
			}
		}
		q := query.NewMultiPhraseQuery(terms, c.field)
		q.SetBoost(c.boost)
		return q
	case none:
		return query.NewMatchNoneQuery()
	}
	panic(fmt.Sprintf("no bleve query for %T", c))
}

func termQuery(term, field string, boost float64) query.Query {
	q := query.NewTermQuery(term)
	q.SetField(field)
	q.SetBoost(boost)
	return q
}

// bleveScores runs p through bleve's own searchers: every matching
// document's score, by id.
func bleveScores(t *testing.T, x *Index, p *plan) map[string]float64 {
	t.Helper()
	b := query.NewBooleanQuery(nil, nil, nil)
	for _, m := range p.must {
		b.AddMust(bleveQuery(m))
	}
	if p.should != nil {
		b.AddShould(bleveQuery(p.should).(*query.DisjunctionQuery).Disjuncts...)
	}
	if len(p.kinds) > 0 {
		ks := make([]query.Query, len(p.kinds))
		for i, k := range p.kinds {
			ks[i] = termQuery(k, fieldKind, 1)
		}
		b.AddFilter(query.NewDisjunctionQuery(ks))
	}
	sr, err := x.bleve.SearchInContext(t.Context(), bleve.NewSearchRequestOptions(b, 100000, 0, false))
	if err != nil {
		t.Fatalf("bleve search: %v", err)
	}
	out := make(map[string]float64, len(sr.Hits))
	for _, h := range sr.Hits {
		out[h.ID] = h.Score
	}
	if int(sr.Total) != len(out) {
		t.Fatalf("bleve counted %d hits and returned %d", sr.Total, len(out))
	}
	return out
}

// ourScores runs p through the scorer.
func ourScores(t *testing.T, x *Index, p *plan) map[string]float64 {
	t.Helper()
	snap, err := x.snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	s, err := newScorer(t.Context(), snap)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	ms, err := s.run(p.must, p.should, p.kinds)
	if err != nil {
		t.Fatal(err)
	}
	page, err := s.best(ms, len(ms)+1)
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]float64, len(page))
	for _, r := range page {
		out[r.id] = r.score
	}
	if len(out) != len(ms) {
		t.Fatalf("%d matches, %d distinct documents", len(ms), len(out))
	}
	return out
}

// TestScoresMatchBleve checks that the scorer finds exactly the documents
// bleve's searchers find for the same query, with the same scores, on both
// the ranking fixture and the generated benchmark corpus, over every kind
// of clause a query compiles to: words, stems, prefixes, typos at distance
// 1 and 2, the phrase bonus and the all-words clause, quoted phrases (with
// a stop word inside), and kinds.
func TestScoresMatchBleve(t *testing.T) {
	corpora := []struct {
		name    string
		x       *Index
		queries []string
	}{
		{"fixture", openFixture(t, fixture()), []string{
			"ripgrep", "triage", "tracking", "migrations", "taks", "serach", "ripgerp", "migraton",
			"serach symbols", "migra", "findSym", "addTask", "task priority", "tasks naming",
			"priorty tasks", "setup", `"rollback a deployment"`, `"migration names" timestamp`,
			"vault secrets", "skill:tasks/triage", `"search the repository" symbols`, "deploy rollback history",
		}},
		{"captest", openFixture(t, benchRegistry(t)), append(append([]string{}, benchQueries...),
			"cache", "retry backoff", "memory metrics", "schema migration", "deploymnet caching",
			"profile", "token secret", `"task tracking"`, "task tracking search index config"),
		},
	}
	kindSets := [][]string{nil, {KindSkill, KindDoc}}
	for _, c := range corpora {
		for _, q := range c.queries {
			for _, kinds := range kindSets {
				t.Run(fmt.Sprintf("%s/%s/%v", c.name, q, kinds), func(t *testing.T) {
					snap, err := c.x.snapshot()
					if err != nil {
						t.Fatal(err)
					}
					p, err := c.x.compile(t.Context(), snap, q, kinds)
					snap.Close()
					if err != nil || p == nil {
						t.Fatalf("compile: %v, %v", p, err)
					}
					// A plan's clauses hold the readers of one run.
					want := bleveScores(t, c.x, p)
					snap, _ = c.x.snapshot()
					p, _ = c.x.compile(t.Context(), snap, q, kinds)
					snap.Close()
					got := ourScores(t, c.x, p)
					if len(got) != len(want) {
						t.Errorf("%d hits, bleve finds %d", len(got), len(want))
					}
					if len(want) == 0 && kinds == nil && q != "vault secrets" {
						t.Errorf("no hits: the query tests nothing")
					}
					for id, w := range want {
						g, ok := got[id]
						if !ok {
							t.Errorf("%s not found, bleve scores it %g", id, w)
							continue
						}
						if math.Abs(g-w) > 1e-12*math.Max(1, math.Abs(w)) {
							t.Errorf("%s scores %.17g, bleve %.17g", id, g, w)
						}
					}
				})
			}
		}
	}
}
