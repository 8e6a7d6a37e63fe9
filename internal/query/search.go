package query

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"

	"github.com/omnidev/omnidev/internal/capability"
)

// Result is the answer to one Request.
type Result struct {
	// Results are the hits, best first; never nil.
	Results []Hit `json:"results"`
	// Total counts every matching document, before the limit.
	Total int `json:"total"`
	// Summary and TypeDefinitions cover every enabled capability for an
	// empty query, and the capabilities of the returned hits when
	// IncludeTypes is set.
	Summary         []CapabilitySummary `json:"summary,omitempty"`
	TypeDefinitions string              `json:"type_definitions,omitempty"`
}

// Hit is one matching document.
type Hit struct {
	// Source tags the document: capability:<id>, skill:<id>/<name>,
	// doc:<id>/<name> or rule:<id>/<name>.
	Source string `json:"source"`
	// Kind is the kind of the document (see Kinds).
	Kind string `json:"kind"`
	// Capability is the id of the capability the document belongs to.
	Capability string `json:"capability"`
	// Name is the document's name within its capability (a skill, doc or
	// rule name; a capability's id).
	Name string `json:"name"`
	// Title is the document's heading (a capability's or skill's name).
	Title string `json:"title"`
	// Snippet is the best matching passage, at most SnippetChars characters,
	// with matched words marked **like this**.
	Snippet string  `json:"snippet"`
	Score   float64 `json:"score"`
}

// CapabilitySummary describes one enabled capability.
type CapabilitySummary struct {
	ID          string `json:"id"`
	Module      string `json:"module"`
	Name        string `json:"name"`
	Description string `json:"description"`
}

// Search runs req. Errors that wrap ErrInvalidRequest are the caller's to
// fix; any other error is the index's.
func (x *Index) Search(ctx context.Context, req Request) (*Result, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if x.closed.Load() {
		return nil, ErrClosed
	}
	writes := x.writes.Load()
	st := x.state.Load()
	if strings.TrimSpace(req.Query) == "" {
		return &Result{
			Results:         []Hit{},
			Summary:         summaries(st.caps),
			TypeDefinitions: TypeDefinitions(st.caps),
		}, nil
	}

	res := &Result{Results: []Hit{}}
	p, err := x.compile(ctx, req.Query, req.Kinds)
	if err != nil {
		return nil, err
	}
	if p == nil { // nothing searchable: only stop words or punctuation
		return res, nil
	}
	page, total, err := x.rank(ctx, p.rank, req.limit())
	if err != nil {
		return nil, err
	}

	res.Total = total
	located, complete, err := x.locate(ctx, p.highlight, page, st.docs)
	if err != nil {
		return nil, err
	}
	// The text of st's documents is what the index stores for them unless
	// an Update wrote the index meanwhile: the locations found must then be
	// cut from the text stored beside them.
	if writes%2 == 1 || x.writes.Load() != writes || !complete {
		if located, _, err = x.locate(ctx, p.highlight, page, nil); err != nil {
			return nil, err
		}
	}

	var hitCaps []*capability.Capability
	seen := make(map[string]bool)
	for _, h := range page {
		kind, capID, name := parseSource(h.ID)
		if kind == KindCapability {
			name = capID
		}
		l := located[h.ID]
		if l == nil {
			continue // removed by an Update since it was ranked
		}
		res.Results = append(res.Results, Hit{
			Source:     h.ID,
			Kind:       kind,
			Capability: capID,
			Name:       name,
			Title:      storedString(l, fieldTitle),
			Snippet:    snippetOf(l),
			Score:      h.Score,
		})
		// A hit may come from a batch newer than st (Update swaps the state
		// after the batch): its capability is then left out of the summary.
		if c := st.byID[capID]; c != nil && !seen[capID] {
			seen[capID] = true
			hitCaps = append(hitCaps, c)
		}
	}
	if req.IncludeTypes && len(hitCaps) > 0 {
		res.Summary = summaries(hitCaps)
		res.TypeDefinitions = TypeDefinitions(hitCaps)
	}
	return res, nil
}

// rank returns the best limit hits of q, ordered by score then source, and
// the number of all hits. It loads neither locations nor stored fields:
// those are for the returned page only (see locate).
func (x *Index) rank(ctx context.Context, q query.Query, limit int) ([]*search.DocumentMatch, int, error) {
	// One hit more than asked for shows whether a tie of scores straddles
	// the limit. Only then is the page sorted by source inside bleve, which
	// must load the id of every matching document to do so; otherwise the
	// page is the same set whatever the ties, and is ordered here.
	req := bleve.NewSearchRequestOptions(q, limit+1, 0, false)
	sr, err := x.search(ctx, req)
	if err != nil {
		return nil, 0, err
	}
	hits := sr.Hits
	if len(hits) > limit {
		if hits[limit].Score == hits[limit-1].Score {
			req.Size = limit
			req.SortBy([]string{"-_score", "_id"})
			if sr, err = x.search(ctx, req); err != nil {
				return nil, 0, err
			}
		}
		// An Update between the two searches may have removed hits.
		hits = sr.Hits[:min(limit, len(sr.Hits))]
	}
	slices.SortStableFunc(hits, func(a, b *search.DocumentMatch) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), strings.Compare(a.ID, b.ID))
	})
	return hits, int(sr.Total), nil
}

// locate finds the locations of the terms of highlight in the documents of
// page, and their stored fields: from docs, when it is not nil, else from
// the index. Reading locations in the ranking search would decode them for
// every matching document, which costs several times the search itself.
//
// Loading stored fields from the index cost a tenth of a search: each
// document is looked up by id, decompressed and copied. complete is false
// when docs lacks a document found.
func (x *Index) locate(ctx context.Context, highlight []query.Query, page []*search.DocumentMatch, docs map[string]document) (located map[string]*search.DocumentMatch, complete bool, err error) {
	if len(page) == 0 {
		return nil, true, nil
	}
	ids := make([]string, len(page))
	for i, h := range page {
		ids[i] = h.ID
	}
	// The page drives the search: each highlight clause only skips ahead
	// to the documents of the page.
	q := query.NewBooleanQuery([]query.Query{query.NewDocIDQuery(ids)}, highlight, nil)
	req := bleve.NewSearchRequestOptions(q, len(ids), 0, false)
	req.Score = bleve.ScoreNone
	if docs == nil {
		req.Fields = []string{fieldTitle, fieldDescription, fieldBody}
	}
	req.IncludeLocations = true
	sr, err := x.search(ctx, req)
	if err != nil {
		return nil, false, err
	}
	out := make(map[string]*search.DocumentMatch, len(sr.Hits))
	complete = true
	for _, h := range sr.Hits {
		out[h.ID] = h
		if docs == nil {
			continue
		}
		d, ok := docs[h.ID]
		if !ok {
			complete = false
			continue
		}
		h.Fields = map[string]any{fieldTitle: d.Title, fieldDescription: d.Description, fieldBody: d.Body}
	}
	return out, complete, nil
}

func (x *Index) search(ctx context.Context, req *bleve.SearchRequest) (*bleve.SearchResult, error) {
	sr, err := x.bleve.SearchInContext(ctx, req)
	switch {
	case err == nil:
		return sr, nil
	case errors.Is(err, bleve.ErrorIndexClosed):
		return nil, ErrClosed
	case ctx.Err() != nil:
		return nil, ctx.Err()
	}
	return nil, fmt.Errorf("search query index: %w", err)
}

// storedString returns a stored field of h.
func storedString(h *search.DocumentMatch, field string) string {
	s, _ := h.Fields[field].(string)
	return s
}

// summaries describes caps, in order.
func summaries(caps []*capability.Capability) []CapabilitySummary {
	out := make([]CapabilitySummary, 0, len(caps))
	for _, c := range caps {
		out = append(out, CapabilitySummary{
			ID:          c.ID,
			Module:      moduleOf(c),
			Name:        c.Name,
			Description: c.Description,
		})
	}
	return out
}

func moduleOf(c *capability.Capability) string {
	if c.Module != "" {
		return c.Module
	}
	return c.ID
}
