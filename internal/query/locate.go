package query

import (
	"context"
	"slices"

	"github.com/blevesearch/bleve/v2/search"
	index "github.com/blevesearch/bleve_index_api"
)

// locateTerms returns the documents of page, by id, with where the terms
// of p.located stand in their fields and, when stored is set, their stored
// text. It reads the terms' postings through r, skipping ahead to the
// page's documents: the terms are known (see expander), and bleve's own
// way, the query again in conjunction with the page's ids, walks a
// searcher tree to the same postings (see doc.go for the figures).
func locateTerms(ctx context.Context, r index.IndexReader, p *plan, page []*search.DocumentMatch, stored bool) (map[string]*search.DocumentMatch, error) {
	type located struct {
		id index.IndexInternalID
		m  *search.DocumentMatch
	}
	docs := make([]located, 0, len(page))
	out := make(map[string]*search.DocumentMatch, len(page))
	for _, h := range page {
		m := &search.DocumentMatch{ID: h.ID, Locations: search.FieldTermLocationMap{}, Fields: map[string]any{}}
		if stored {
			if err := storedFields(r, m); err != nil {
				return nil, err
			}
		}
		docs = append(docs, located{h.IndexInternalID, m})
		out[h.ID] = m
	}
	// Postings are read in document order.
	slices.SortFunc(docs, func(a, b located) int { return a.id.Compare(b.id) })

	var tfd index.TermFieldDoc
	for _, f := range matchFields {
		for _, term := range p.located[f] {
			tfr, err := r.TermFieldReader(ctx, []byte(term), f, false, false, true)
			if err != nil {
				return nil, err
			}
			var at *index.TermFieldDoc
			for _, d := range docs {
				if at == nil || at.ID.Compare(d.id) < 0 {
					if at, err = tfr.Advance(d.id, &tfd); err != nil {
						tfr.Close()
						return nil, err
					}
					if at == nil {
						break
					}
				}
				if !at.ID.Equals(d.id) {
					continue
				}
				locs := d.m.Locations[f]
				if locs == nil {
					locs = search.TermLocationMap{}
					d.m.Locations[f] = locs
				}
				for _, v := range at.Vectors {
					locs.AddLocation(term, &search.Location{Pos: v.Pos, Start: v.Start, End: v.End})
				}
			}
			tfr.Close()
		}
	}
	return out, nil
}

// storedFields reads the stored text of m's document into m.Fields.
func storedFields(r index.IndexReader, m *search.DocumentMatch) error {
	doc, err := r.Document(m.ID)
	if err != nil || doc == nil {
		return err
	}
	doc.VisitFields(func(f index.Field) {
		switch f.Name() {
		case fieldTitle, fieldDescription, fieldBody:
			m.Fields[f.Name()] = string(f.Value())
		}
	})
	return nil
}
