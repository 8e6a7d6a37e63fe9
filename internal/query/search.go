package query

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/collector"
	"github.com/blevesearch/bleve/v2/search/query"
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
	// Warnings are the caller's to fill in: problems of the configuration
	// (file and line), a reload that failed.
	Warnings []string `json:"warnings,omitempty"`
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
	// with matched words marked **like this** (except inside code).
	Snippet string `json:"snippet"`
	// Matched lists the words of the document, as written, that a typo or
	// a prefix of the query matched, when it did not match them literally.
	Matched []string `json:"matched,omitempty"`
	// Score ranks the hits; it is rounded to scoreDigits significant digits.
	Score float64 `json:"score"`
	// URI is the resource that holds the whole document (a capability's
	// definition.md, else its types.d.ts; a tool's declaration,
	// omni://<capability>/tools/<tool>.d.ts), for resources/read; empty
	// when there is none.
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
	// Functions counts the functions the module exports: a wrapped
	// server's tools, the functions a types.d.ts declares.
	Functions int `json:"functions,omitempty"`
	// TypesNote says where the capability's type definitions are when the
	// answer does not hold them whole, in one line.
	TypesNote string `json:"types_note,omitempty"`
	// Tools is the number of tools of the MCP server the capability wraps
	// (absent for other capabilities).
	Tools *int `json:"tools,omitempty"`
	// Error says why the capability cannot be used; importing its module
	// fails with the same sentence. For a wrapped MCP server it is why its
	// tools are unknown (it cannot start, or is starting).
	Error string `json:"error,omitempty"`
	// Starting is set while a wrapped MCP server has not listed its tools
	// yet: ask again in a moment, or import it, and the run waits for it.
	Starting bool `json:"starting,omitempty"`
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
	res, err := x.search(ctx, req, false)
	switch {
	case err == nil:
		return res, nil
	case errors.Is(err, bleve.ErrorIndexClosed):
		return nil, ErrClosed
	case ctx.Err() != nil:
		return nil, err
	}
	return nil, fmt.Errorf("search query index for %q: %w", req.Query, err)
}

// maxMatched bounds Hit.Matched: a prefix of a common stem can match dozens
// of words in one long doc.
const maxMatched = 5

// tieMargin is how many hits past the limit the first pass asks for, so
// that hits of equal score come in source order even where the limit cuts
// through them: bleve breaks ties by its internal document numbers, and
// sorting on the id in bleve would read the id of every match.
const tieMargin = 10

// search runs req. plainBleve is a hook for benchmarks alone: it widens
// words with bleve's own prefix and fuzzy queries, and reads the page's
// locations by running the query again, rather than through the index
// reader (expand.go, locate.go), which is the reference BenchmarkSearch
// measures those two against.
func (x *Index) search(ctx context.Context, req Request, plainBleve bool) (*Result, error) {
	writes := x.writes.Load()
	st := x.state.Load()
	if strings.TrimSpace(req.Query) == "" {
		defs, notes := st.overview()
		return &Result{
			Results:         []Hit{},
			Summary:         summaries(st.listed(), notes),
			TypeDefinitions: defs,
		}, nil
	}
	// One reader serves the whole search: the lookups of the query's
	// words, both passes and the stored text.
	r, err := x.reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	// The text of st's documents is what r holds for them unless an Update
	// wrote the index between reading writes and taking r: the text is then
	// read from r.
	docs := st.docs
	if writes%2 == 1 || x.writes.Load() != writes {
		docs = nil
	}

	var p *plan
	if plainBleve {
		p = x.compile(req.Query, req.Kinds, nil)
	} else {
		e := &expander{ctx: ctx, r: r}
		if p = x.compile(req.Query, req.Kinds, e); e.err != nil {
			return nil, e.err
		}
	}
	res := &Result{Results: []Hit{}}
	if p == nil { // nothing searchable: only stop words or punctuation
		return res, nil
	}

	// First pass: rank, without locations, which bleve would otherwise
	// read for every match.
	limit := req.limit()
	page, total, err := x.collect(ctx, r, p.query, limit+tieMargin, false)
	if err != nil {
		return nil, err
	}
	res.Total = total
	slices.SortFunc(page, func(a, b *search.DocumentMatch) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), strings.Compare(a.ID, b.ID))
	})
	page = page[:min(limit, len(page))]
	if len(page) == 0 {
		return res, nil
	}

	// Second pass, over the page alone: where the query's terms stand.
	located, err := x.locate(ctx, r, p, page, docs == nil)
	if err != nil {
		return nil, err
	}
	var hitCaps []*capability.Capability
	seen := make(map[string]bool)
	toolsHit := make(map[string][]string)
	for _, h := range page {
		kind, capID, name := parseSource(h.ID)
		if kind == KindCapability {
			name = capID
		}
		l := located[h.ID]
		if l == nil {
			l = &search.DocumentMatch{ID: h.ID}
		}
		if d, ok := docs[h.ID]; ok {
			l.Fields = map[string]any{fieldTitle: d.Title, fieldDescription: d.Description, fieldBody: d.Body}
		}
		res.Results = append(res.Results, Hit{
			Source:     h.ID,
			Kind:       kind,
			Capability: capID,
			Name:       name,
			Title:      storedString(l, fieldTitle),
			Snippet:    snippetOf(l),
			Matched:    matchedWords(l, p.literal),
			Score:      roundScore(h.Score),
			URI:        hitURI(st.byID[capID], kind, name),
		})
		// A hit may come from a batch newer than st (Update swaps the state
		// after the batch): its capability is then left out of the summary.
		if c := st.byID[capID]; c != nil && !seen[capID] {
			seen[capID] = true
			hitCaps = append(hitCaps, c)
		}
		if kind == KindTool {
			toolsHit[capID] = append(toolsHit[capID], name)
		}
	}
	if req.IncludeTypes && len(hitCaps) > 0 {
		defs, notes := st.hitTypes(hitCaps, toolsHit)
		res.Summary = summaries(hitCaps, notes)
		res.TypeDefinitions = defs
	}
	return res, nil
}

// reader returns a reader of the index as it is now, to be closed by the
// caller.
func (x *Index) reader() (index.IndexReader, error) {
	adv, err := x.bleve.Advanced()
	if err != nil {
		return nil, err
	}
	return adv.Reader()
}

// collect runs q over r with bleve's searchers and collector: the size
// best hits by score, with their term locations when locations is set,
// and how many documents matched.
func (x *Index) collect(ctx context.Context, r index.IndexReader, q query.Query, size int, locations bool) ([]*search.DocumentMatch, int, error) {
	s, err := q.Searcher(ctx, r, x.bleve.Mapping(), search.SearcherOptions{IncludeTermVectors: locations})
	if err != nil {
		return nil, 0, err
	}
	defer s.Close()
	c := collector.NewTopNCollector(size, 0, search.SortOrder{&search.SortScore{Desc: true}})
	if err := c.Collect(ctx, s, r); err != nil {
		return nil, 0, err
	}
	return c.Results(), int(c.Total()), nil
}

// locate returns the documents of page, by id, with where the terms the
// query matched stand in their fields and, when stored is set, their
// stored text. When the plan knows its terms, their postings are read
// (see locateTerms); else the query runs again over the page's documents.
func (x *Index) locate(ctx context.Context, r index.IndexReader, p *plan, page []*search.DocumentMatch, stored bool) (map[string]*search.DocumentMatch, error) {
	if p.located != nil {
		return locateTerms(ctx, r, p, page, stored)
	}
	ids := make([]string, len(page))
	for i, h := range page {
		ids[i] = h.ID
	}
	q := query.NewConjunctionQuery([]query.Query{query.NewDocIDQuery(ids), p.query})
	found, _, err := x.collect(ctx, r, q, len(page), true)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*search.DocumentMatch, len(found))
	for _, h := range found {
		h.Fields = map[string]any{}
		if stored {
			if err := storedFields(r, h); err != nil {
				return nil, err
			}
		}
		out[h.ID] = h
	}
	return out, nil
}

// matchedWords returns the words of h, as written and lower-cased, that
// terms outside literal matched (the words of a typo or a prefix), unless a
// literal term matched the same word too (its stem).
func matchedWords(h *search.DocumentMatch, literal map[string]bool) []string {
	var out []string
	for _, f := range matchFields {
		text := storedString(h, f)
		terms := h.Locations[f]
		literalAt := make(map[[2]uint64]bool)
		for term, locs := range terms {
			if literal[term] {
				for _, l := range locs {
					literalAt[[2]uint64{l.Start, l.End}] = true
				}
			}
		}
		for term, locs := range terms {
			if literal[term] {
				continue
			}
			for _, l := range locs {
				if literalAt[[2]uint64{l.Start, l.End}] || l.End > uint64(len(text)) || l.Start >= l.End {
					continue
				}
				w := strings.ToLower(text[l.Start:l.End])
				if !slices.Contains(out, w) {
					out = append(out, w)
				}
			}
		}
	}
	slices.Sort(out)
	return out[:min(len(out), maxMatched)]
}

// scoreDigits is how many significant digits a score keeps: enough to
// order the hits of one answer, few enough to read.
const scoreDigits = 4

func roundScore(s float64) float64 {
	if s == 0 || math.IsInf(s, 0) || math.IsNaN(s) {
		return s
	}
	scale := math.Pow(10, scoreDigits-1-math.Floor(math.Log10(math.Abs(s))))
	return math.Round(s*scale) / scale
}

// storedString returns a stored field of h.
func storedString(h *search.DocumentMatch, field string) string {
	s, _ := h.Fields[field].(string)
	return s
}

// summaries describes caps, in order, with the notes on where their type
// definitions are by capability id.
func summaries(caps []*capability.Capability, typesNotes map[string]string) []CapabilitySummary {
	out := make([]CapabilitySummary, 0, len(caps))
	for _, c := range caps {
		s := CapabilitySummary{
			ID:          c.ID,
			Module:      moduleOf(c),
			Name:        c.Name,
			Description: c.Description,
			NoTypes:     c.Entry != "" && strings.TrimSpace(c.Types) == "" && c.Error == "",
			Error:       c.Error,
			Functions:   functions(c),
			TypesNote:   typesNotes[c.ID],
		}
		if c.MCP != nil {
			n := len(c.Tools)
			s.Tools = &n
			if s.Error == "" {
				s.Error = c.ToolsError
			}
			s.Starting = c.ToolsError == capability.ToolsStarting
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
