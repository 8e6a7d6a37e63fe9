package query

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/search"
	index "github.com/blevesearch/bleve_index_api"

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
	// URI is the resource that holds the whole document (a capability's
	// definition.md, else its types.d.ts), for resources/read; empty when
	// there is none.
	URI string `json:"uri,omitempty"`
}

// CapabilitySummary describes one enabled capability.
type CapabilitySummary struct {
	ID          string `json:"id"`
	Module      string `json:"module"`
	Name        string `json:"name"`
	Description string `json:"description"`
	// Skills are "name: description", one per skill.
	Skills []string `json:"skills,omitempty"`
	// Rules are "name: title", one per rule: guidance that always applies
	// to code using the capability.
	Rules []string `json:"rules,omitempty"`
	// NoTypes is set when the capability has code but no type definitions.
	NoTypes bool `json:"no_types,omitempty"`
	// Tools is the number of tools of the MCP server the capability wraps
	// (absent for other capabilities).
	Tools *int `json:"tools,omitempty"`
	// Error says why the capability cannot be used; importing its module
	// fails with the same sentence. For a wrapped MCP server it is why its
	// tools are unknown (it cannot start, or is starting).
	Error string `json:"error,omitempty"`
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
			Summary:         summaries(st.listed()),
			TypeDefinitions: TypeDefinitions(st.caps),
		}, nil
	}

	res := &Result{Results: []Hit{}}
	snap, err := x.snapshot()
	if err != nil {
		return nil, err
	}
	defer snap.Close()
	// The text of st's documents is what snap holds for them unless an
	// Update wrote the index between reading writes and taking snap: the
	// text is then read from snap.
	docs := st.docs
	if writes%2 == 1 || x.writes.Load() != writes {
		docs = nil
	}

	p, err := x.compile(ctx, snap, req.Query, req.Kinds)
	if err != nil {
		return nil, err
	}
	if p == nil { // nothing searchable: only stop words or punctuation
		return res, nil
	}
	s, err := newScorer(ctx, snap)
	if err != nil {
		return nil, err
	}
	defer s.close()
	matches, err := s.run(p.must, p.should, p.kinds)
	if err != nil {
		return nil, err
	}
	res.Total = len(matches)
	page, err := s.best(matches, req.limit())
	if err != nil {
		return nil, err
	}
	s.release(matches)
	located, err := locate(s, p.highlight, page, docs)
	if err != nil {
		return nil, err
	}

	var hitCaps []*capability.Capability
	seen := make(map[string]bool)
	for _, h := range page {
		kind, capID, name := parseSource(h.id)
		if kind == KindCapability {
			name = capID
		}
		l := located[h.id]
		res.Results = append(res.Results, Hit{
			Source:     h.id,
			Kind:       kind,
			Capability: capID,
			Name:       name,
			Title:      storedString(l, fieldTitle),
			Snippet:    snippetOf(l),
			Score:      h.score,
			URI:        hitURI(st.byID[capID], kind, name),
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

// snapshot returns the index as it is now, to be closed by the caller.
func (x *Index) snapshot() (*scorch.IndexSnapshot, error) {
	adv, err := x.bleve.Advanced()
	if err != nil {
		return nil, fmt.Errorf("search query index: %w", err)
	}
	r, err := adv.Reader()
	if err != nil {
		return nil, fmt.Errorf("search query index: %w", err)
	}
	// Open verified that the index is scorch, whose Reader returns no
	// snapshot, and no error, once it is closed.
	snap, _ := r.(*scorch.IndexSnapshot)
	if snap == nil {
		return nil, ErrClosed
	}
	return snap, nil
}

// locate returns the documents of page, by id, with their text (from docs
// when it holds them, else from the snapshot) and where the terms of
// highlight stand in their snippet fields. Locations are read for the page
// alone: reading them while ranking would decode them for every match.
func locate(s *scorer, highlight map[string][]string, page []ranked, docs map[string]document) (map[string]*search.DocumentMatch, error) {
	out := make(map[string]*search.DocumentMatch, len(page))
	for _, r := range page {
		h := &search.DocumentMatch{ID: r.id, Locations: search.FieldTermLocationMap{}}
		if d, ok := docs[r.id]; ok {
			h.Fields = map[string]any{fieldTitle: d.Title, fieldDescription: d.Description, fieldBody: d.Body}
		} else {
			fields, err := storedFields(s.snap, r.id)
			if err != nil {
				return nil, err
			}
			h.Fields = fields
		}
		out[r.id] = h
	}
	// Each term's postings are read once, skipping ahead to the page's
	// documents in their order in the index.
	byDoc := slices.SortedFunc(slices.Values(page), func(a, b ranked) int { return cmp.Compare(a.doc, b.doc) })
	var id index.IndexInternalID
	for _, f := range snippetFields {
		terms := slices.Clone(highlight[f])
		slices.Sort(terms)
		for _, term := range slices.Compact(terms) {
			rd, err := s.open(term, f, true)
			if err != nil {
				return nil, err
			}
			if rd.Count() == 0 {
				continue
			}
			var tfd index.TermFieldDoc
			var at *index.TermFieldDoc
			for _, r := range byDoc {
				if at == nil || at.ID.Value() < r.doc {
					id = index.NewIndexInternalID(id, r.doc)
					if at, err = rd.Advance(id, &tfd); err != nil {
						return nil, fmt.Errorf("search query index: %w", err)
					}
					if at == nil {
						break
					}
				}
				if at.ID.Value() != r.doc {
					continue
				}
				locs := out[r.id].Locations[f]
				if locs == nil {
					locs = search.TermLocationMap{}
					out[r.id].Locations[f] = locs
				}
				slab := make([]search.Location, len(at.Vectors))
				ptrs := make(search.Locations, len(at.Vectors))
				for i, v := range at.Vectors {
					slab[i] = search.Location{Pos: v.Pos, Start: v.Start, End: v.End}
					ptrs[i] = &slab[i]
				}
				locs[term] = ptrs
			}
		}
	}
	return out, nil
}

// storedFields reads the text snap stores for the document id.
func storedFields(snap *scorch.IndexSnapshot, id string) (map[string]any, error) {
	doc, err := snap.Document(id)
	if err != nil {
		return nil, fmt.Errorf("search query index: %w", err)
	}
	fields := make(map[string]any)
	if doc == nil {
		return fields, nil
	}
	doc.VisitFields(func(f index.Field) {
		switch f.Name() {
		case fieldTitle, fieldDescription, fieldBody:
			fields[f.Name()] = string(f.Value())
		}
	})
	return fields, nil
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
		s := CapabilitySummary{
			ID:          c.ID,
			Module:      moduleOf(c),
			Name:        c.Name,
			Description: c.Description,
			NoTypes:     c.Entry != "" && strings.TrimSpace(c.Types) == "" && c.Error == "",
			Error:       c.Error,
		}
		if c.MCP != nil {
			n := len(c.Tools)
			s.Tools = &n
			if s.Error == "" {
				s.Error = c.ToolsError
			}
		}
		for _, sk := range c.Skills {
			s.Skills = append(s.Skills, oneLine(sk.Name+": "+sk.Description))
		}
		for _, r := range c.Rules {
			s.Rules = append(s.Rules, oneLine(r.Name+": "+r.Title))
		}
		out = append(out, s)
	}
	return out
}

// listed returns the capabilities an empty query lists: the enabled ones
// and those that cannot run (with their error), by id.
func (st *state) listed() []*capability.Capability {
	if len(st.unavailable) == 0 {
		return st.caps
	}
	all := slices.Concat(st.caps, st.unavailable)
	slices.SortFunc(all, func(a, b *capability.Capability) int { return strings.Compare(a.ID, b.ID) })
	return all
}

// oneLine collapses whitespace, so that each entry of a list is one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func moduleOf(c *capability.Capability) string {
	if c.Module != "" {
		return c.Module
	}
	return c.ID
}
