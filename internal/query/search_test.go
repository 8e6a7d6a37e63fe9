package query

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/omnidev/omnidev/internal/capability"
)

// sources returns the sources of hits, in order.
func sources(hits []Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Source
	}
	return out
}

func TestRanking(t *testing.T) {
	x := openFixture(t, fixture())
	tests := []struct {
		name  string
		query string
		// wantFirst is the source of the best hit.
		wantFirst string
		// wantOnly, when set, is the whole list of hits, in order.
		wantOnly []string
	}{
		{name: "exact word", query: "ripgrep", wantOnly: []string{"capability:search"}},
		{name: "skill name over a body repeating the word", query: "triage", wantFirst: "skill:tasks/triage"},
		{name: "stem: tracking finds track", query: "tracking", wantFirst: "capability:tasks"},
		{name: "stem: plural", query: "migrations", wantFirst: "doc:database/guide/rollback-migration"},
		{name: "typo: transposition", query: "taks", wantFirst: "capability:tasks"},
		{name: "typo: serach", query: "serach", wantFirst: "capability:search"},
		{name: "typo in an exported name", query: "ripgerp", wantFirst: "capability:search"},
		{name: "typo: two edits in a long word", query: "migraton", wantFirst: "doc:database/guide/rollback-migration"},
		{name: "typo beside a known word", query: "serach symbols", wantFirst: "skill:search/find-symbol"},
		{name: "prefix", query: "migra", wantFirst: "doc:database/guide/rollback-migration"},
		{name: "prefix of an identifier", query: "findSym", wantFirst: "skill:search/find-symbol"},
		{name: "identifier from types.d.ts", query: "addTask", wantFirst: "doc:tasks/definition"},
		{name: "two words, one in every field of a capability", query: "task priority", wantFirst: "skill:tasks/triage"},
		{name: "capability id and doc name", query: "tasks naming", wantFirst: "rule:tasks/naming"},
		{name: "typo beside a word", query: "priorty tasks", wantFirst: "skill:tasks/triage"},
		{name: "typo: one letter left out of a word one doc holds", query: "timestmp", wantOnly: []string{"rule:database/naming"}},
		{name: "typo: one letter replaced in a word one doc holds", query: "reviewar", wantFirst: "doc:review/checklist"},
		{name: "doc name", query: "setup", wantFirst: "doc:tasks/guide/setup"},
		{
			// deploy/history holds both words, not the phrase.
			name: "quoted phrase is required", query: `"rollback a deployment"`,
			wantOnly: []string{"doc:deploy/rollback"},
		},
		{
			name: "quoted phrase and a word", query: `"migration names" timestamp`,
			wantOnly: []string{"rule:database/naming"},
		},
		{name: "disabled capability never found", query: "vault secrets", wantOnly: []string{}},
		{name: "stop words only", query: "the and of", wantOnly: []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := x.Search(t.Context(), Request{Query: tt.query})
			if err != nil {
				t.Fatalf("Search(%q): %v", tt.query, err)
			}
			got := sources(res.Results)
			if tt.wantOnly != nil && !slices.Equal(got, tt.wantOnly) {
				t.Errorf("Search(%q) = %q, want %q", tt.query, got, tt.wantOnly)
			}
			if tt.wantFirst != "" && (len(got) == 0 || got[0] != tt.wantFirst) {
				t.Errorf("Search(%q) = %q, want %s first", tt.query, got, tt.wantFirst)
			}
		})
	}
}

func TestSearchResultFields(t *testing.T) {
	x := openFixture(t, fixture())
	res, err := x.Search(t.Context(), Request{Query: "triage"})
	if err != nil {
		t.Fatal(err)
	}
	want := Hit{
		Source: "skill:tasks/triage", Kind: KindSkill, Capability: "tasks", Name: "triage",
		Title: "triage", Snippet: "Sort incoming tasks by priority",
	}
	got := res.Results[0]
	got.Score = 0
	if !reflect.DeepEqual(got, want) {
		t.Errorf("first hit = %+v, want %+v", got, want)
	}

	res, err = x.Search(t.Context(), Request{Query: "guide setup", Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if h := res.Results[0]; h.Kind != KindDoc || h.Name != "guide/setup" || h.Capability != "tasks" || h.Title != "Setting up tasks" {
		t.Errorf("doc hit = %+v, want doc guide/setup of tasks titled %q", h, "Setting up tasks")
	}

	res, err = x.Search(t.Context(), Request{Query: "ripgrep"})
	if err != nil {
		t.Fatal(err)
	}
	if h := res.Results[0]; h.Kind != KindCapability || h.Name != "search" || h.Title != "Code Search" ||
		h.Snippet != "Search the repository with **ripgrep** and find symbols" {
		t.Errorf("capability hit = %+v", h)
	}
}

func TestSearchMatched(t *testing.T) {
	x := openFixture(t, fixture())
	tests := []struct {
		query string
		want  []string
	}{
		{query: "timestmp", want: []string{"timestamp"}},
		{query: "timestamp"},
		{query: "timest", want: []string{"timestamp"}},
		// "migrations" and "migration" share a stem with the query.
		{query: "migrations"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			res, err := x.Search(t.Context(), Request{Query: tt.query, Limit: 1})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Results) == 0 {
				t.Fatal("no hits")
			}
			if got := res.Results[0].Matched; !slices.Equal(got, tt.want) {
				t.Errorf("Search(%q): first hit %s matched %q, want %q", tt.query, res.Results[0].Source, got, tt.want)
			}
		})
	}
}

func TestSearchIdentifiers(t *testing.T) {
	filler := " Nothing else of note here, only some words to read."
	docs := map[string]string{
		"readfile": "Load it with os.ReadFile and check the error." + filler,
		"parse":    "Call parseConfig on the bytes." + filler,
		"limits":   "Set max_output_bytes to bound each stream." + filler,
		"zones":    "Times are shown in Europe/Berlin." + filler,
		"server":   "Start the HTTPServer first." + filler,
		"other":    "Read the file, parse the output and configure the server." + filler,
	}
	var ds []capability.Doc
	for name, body := range docs {
		ds = append(ds, capability.Doc{Name: name, Title: name, Body: body})
	}
	x := openFixture(t, &capability.Registry{Capabilities: []*capability.Capability{{ID: "code", Module: "code", Docs: ds}}})
	tests := []struct{ query, want string }{
		{"os.ReadFile", "readfile"},
		{"readfile", "readfile"},
		{"ReadFile", "readfile"},
		{"parseConfig", "parse"},
		{"parse config", "parse"},
		{"max_output_bytes", "limits"},
		{"output bytes", "limits"},
		{"berlin", "zones"},
		{"httpserver", "server"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			res, err := x.Search(t.Context(), Request{Query: tt.query})
			if err != nil {
				t.Fatal(err)
			}
			if got := sources(res.Results); len(got) == 0 || got[0] != "doc:code/"+tt.want {
				t.Errorf("Search(%q) = %q, want doc:code/%s first", tt.query, got, tt.want)
			}
		})
	}
}

func TestSearchPrefixThatIsACommonWord(t *testing.T) {
	// Many docs say "build"; one says "builders": a search for "build"
	// still shows it.
	var ds []capability.Doc
	for i := range 20 {
		ds = append(ds, capability.Doc{Name: fmt.Sprintf("build%02d", i), Title: "Notes", Body: "Run the build before a release."})
	}
	ds = append(ds, capability.Doc{Name: "team", Title: "Team", Body: "The builders of the platform meet weekly."})
	x := openFixture(t, &capability.Registry{Capabilities: []*capability.Capability{{ID: "ci", Module: "ci", Docs: ds}}})
	res, err := x.Search(t.Context(), Request{Query: "build"})
	if err != nil {
		t.Fatal(err)
	}
	if got := sources(res.Results); !slices.Contains(got, "doc:ci/team") {
		t.Errorf("Search(build) = %q, want doc:ci/team among them", got)
	}
}

func TestSearchRareWordsTogetherInALongBody(t *testing.T) {
	// Each word of "statuses responded" stands in one long section; other
	// sections hold one of them, or its stem, in a short title. The section
	// that holds both comes first.
	filler := strings.Repeat("The client sends a request to the server and waits for its answer before it retries. ", 30)
	ds := []capability.Doc{
		{Name: "errors", Title: "Handling errors", Body: filler + "Requests with statuses outside 2xx are rejected once the server responded.\n" + filler},
		{Name: "status", Title: "Project status", Body: "Maintained."},
		{Name: "replies", Title: "Responded requests", Body: "Kept for a day."},
	}
	for i := range 12 {
		ds = append(ds, capability.Doc{Name: fmt.Sprintf("status%02d", i), Title: "Status", Body: fmt.Sprintf("Status page %d of the service.", i)})
	}
	x := openFixture(t, &capability.Registry{Capabilities: []*capability.Capability{{ID: "http", Module: "http", Docs: ds}}})
	res, err := x.Search(t.Context(), Request{Query: "statuses responded"})
	if err != nil {
		t.Fatal(err)
	}
	if got := sources(res.Results); len(got) == 0 || got[0] != "doc:http/errors" {
		t.Errorf("Search(statuses responded) = %q, want doc:http/errors first", got)
	}
}

func TestSearchStartOfAWordIsNotATypo(t *testing.T) {
	// "mone" begins "money": it is searched as that start, not also as a
	// typo of "mode" or "more".
	ds := []capability.Doc{
		{Name: "budget", Title: "Budget", Body: "Where the money goes."},
		{Name: "modes", Title: "Modes", Body: "Pick a mode."},
		{Name: "more", Title: "More", Body: "Read more."},
	}
	x := openFixture(t, &capability.Registry{Capabilities: []*capability.Capability{{ID: "ledger", Module: "ledger", Docs: ds}}})
	res, err := x.Search(t.Context(), Request{Query: "mone"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := sources(res.Results), []string{"doc:ledger/budget"}; !slices.Equal(got, want) {
		t.Errorf("Search(mone) = %q, want %q", got, want)
	}
}

func TestSearchPrefixMeansTheCommonWords(t *testing.T) {
	// "config" begins 70 identifiers, each in one doc, that sort before
	// "configuration", which three docs hold: the prefix still stands for
	// the word people write most.
	var ds []capability.Doc
	for i := range 70 {
		ds = append(ds, capability.Doc{Name: fmt.Sprintf("key%02d", i), Title: "Keys", Body: fmt.Sprintf("Set config.key%02d first.", i)})
	}
	for i := range 3 {
		ds = append(ds, capability.Doc{Name: fmt.Sprintf("setup%d", i), Title: "Setup", Body: "Read the configuration guide."})
	}
	x := openFixture(t, &capability.Registry{Capabilities: []*capability.Capability{{ID: "app", Module: "app", Docs: ds}}})
	res, err := x.Search(t.Context(), Request{Query: "config", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if got := sources(res.Results); !slices.Contains(got, "doc:app/setup0") {
		t.Errorf("Search(config) = %q, want the docs that say configuration among them", got)
	}
}

func TestRoundScore(t *testing.T) {
	tests := []struct{ in, want float64 }{
		{0, 0},
		{1.23456789, 1.235},
		{0.0123456789, 0.01235},
		{123.456, 123.5},
		{98765.4, 98770},
	}
	for _, tt := range tests {
		if got := roundScore(tt.in); got != tt.want {
			t.Errorf("roundScore(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestSearchLimitAndTotal(t *testing.T) {
	x := openFixture(t, fixture())
	all, err := x.Search(t.Context(), Request{Query: "task", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Results) < 4 || all.Total != len(all.Results) {
		t.Fatalf("Search(task) = %d hits, total %d; want at least 4, all of them", len(all.Results), all.Total)
	}
	for _, limit := range []int{1, 2, 3} {
		res, err := x.Search(t.Context(), Request{Query: "task", Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := sources(res.Results), sources(all.Results[:limit]); !slices.Equal(got, want) {
			t.Errorf("limit %d: %q, want the first of the full list %q", limit, got, want)
		}
		if res.Total != all.Total {
			t.Errorf("limit %d: total %d, want %d", limit, res.Total, all.Total)
		}
	}
}

func TestSearchTiesAreOrderedBySource(t *testing.T) {
	// Identical documents score the same: they come in source order, and
	// a limit cutting through them keeps the first sources.
	reg := &capability.Registry{}
	for _, id := range []string{"c", "a", "e", "b", "d"} {
		reg.Capabilities = append(reg.Capabilities, &capability.Capability{
			ID: id, Name: "Same", Module: id, Description: "identical description",
		})
	}
	x := openFixture(t, reg)
	for _, limit := range []int{2, 5} {
		res, err := x.Search(t.Context(), Request{Query: "identical", Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"capability:a", "capability:b", "capability:c", "capability:d", "capability:e"}[:limit]
		if got := sources(res.Results); !slices.Equal(got, want) {
			t.Errorf("limit %d: %q, want %q", limit, got, want)
		}
	}
}

func TestSearchKinds(t *testing.T) {
	x := openFixture(t, fixture())
	tests := []struct {
		kinds []string
		want  []string // kinds allowed in the hits
	}{
		{kinds: []string{KindRule}, want: []string{KindRule}},
		{kinds: []string{KindSkill, KindCapability}, want: []string{KindSkill, KindCapability}},
		{kinds: nil, want: []string{KindCapability, KindSkill, KindDoc, KindRule}}, // the fixture wraps no MCP server
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.kinds, ","), func(t *testing.T) {
			res, err := x.Search(t.Context(), Request{Query: "tasks naming migration", Kinds: tt.kinds})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Results) == 0 {
				t.Fatal("no hits")
			}
			seen := map[string]bool{}
			for _, h := range res.Results {
				if !slices.Contains(tt.want, h.Kind) {
					t.Errorf("hit %s of kind %s, want only %q", h.Source, h.Kind, tt.want)
				}
				seen[h.Kind] = true
			}
			if len(seen) != len(tt.want) {
				t.Errorf("kinds seen %v, want each of %q", seen, tt.want)
			}
		})
	}
}

func TestEmptyQuery(t *testing.T) {
	x := openFixture(t, fixture())
	for _, q := range []string{"", "  \n\t"} {
		res, err := x.Search(t.Context(), Request{Query: q, Kinds: []string{KindDoc}})
		if err != nil {
			t.Fatal(err)
		}
		if res.Results == nil || len(res.Results) != 0 || res.Total != 0 {
			t.Errorf("Search(%q): results %v total %d, want [] and 0", q, res.Results, res.Total)
		}
		var ids []string
		for _, s := range res.Summary {
			ids = append(ids, s.ID)
		}
		if want := []string{"database", "deploy", "review", "search", "tasks"}; !slices.Equal(ids, want) {
			t.Errorf("summary ids %q, want %q", ids, want)
		}
		got, want := res.Summary[0], CapabilitySummary{ID: "database", Module: "db", Name: "Database",
			Description: "Run schema migrations and inspect tables of the local database", Functions: 2}
		if got.Skills, got.Rules = nil, nil; !reflect.DeepEqual(got, want) {
			t.Errorf("summary[0] = %+v, want %+v", got, want)
		}
		if want := TypeDefinitions(fixture().Capabilities); res.TypeDefinitions != want {
			t.Errorf("type definitions =\n%s\nwant\n%s", res.TypeDefinitions, want)
		}
	}
}

func TestIncludeTypes(t *testing.T) {
	x := openFixture(t, fixture())
	reg := fixture()
	byID := map[string]*capability.Capability{}
	for _, c := range reg.Capabilities {
		byID[c.ID] = c
	}
	tests := []struct {
		query        string
		includeTypes bool
		wantCaps     []string // in order of their first hit
	}{
		{query: "ripgrep", includeTypes: true, wantCaps: []string{"search"}},
		{query: "rollback", includeTypes: true, wantCaps: []string{"deploy", "database"}},
		{query: "ripgrep", includeTypes: false},
		{query: "nothingmatchesthis", includeTypes: true},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			res, err := x.Search(t.Context(), Request{Query: tt.query, IncludeTypes: tt.includeTypes})
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			var caps []*capability.Capability
			for _, s := range res.Summary {
				ids = append(ids, s.ID)
				caps = append(caps, byID[s.ID])
			}
			if !slices.Equal(ids, tt.wantCaps) {
				t.Errorf("summary %q, want %q", ids, tt.wantCaps)
			}
			if want := TypeDefinitions(caps); res.TypeDefinitions != want {
				t.Errorf("type definitions =\n%s\nwant\n%s", res.TypeDefinitions, want)
			}
		})
	}
}

func TestHostileSyntaxIsPlainText(t *testing.T) {
	x := openFixture(t, fixture())
	tests := []struct {
		query     string
		wantFirst string // "" when any answer will do, as long as there is no error
	}{
		{query: `"unbalanced`},
		{query: `"unbalanced ripgrep`, wantFirst: "capability:search"},
		{query: `+`},
		{query: `+ripgrep`, wantFirst: "capability:search"},
		{query: `-tasks`, wantFirst: "capability:tasks"},
		{query: `skill:tasks/triage`, wantFirst: "skill:tasks/triage"},
		{query: `kind:skill`},
		{query: `field:ripgrep`, wantFirst: "capability:search"},
		{query: `***`},
		{query: `rip*`},
		{query: `\`},
		{query: `ripgrep~2 ^3 \"`, wantFirst: "capability:search"},
		{query: `(a OR b) AND NOT c`},
		{query: `/regex.*/`},
		{query: `""`},
		{query: `" "`},
		{query: "\x00\xff invalid utf-8 \xc3"},
		{query: strings.Repeat("a", 4) + strings.Repeat(" serach", 140)},
		{query: strings.Repeat("word", 250)},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			res, err := x.Search(t.Context(), Request{Query: tt.query})
			if err != nil {
				t.Fatalf("Search(%q): %v", tt.query, err)
			}
			if res.Results == nil {
				t.Errorf("Search(%q): nil results, want a list", tt.query)
			}
			if tt.wantFirst != "" && (len(res.Results) == 0 || res.Results[0].Source != tt.wantFirst) {
				t.Errorf("Search(%q) = %q, want %s first", tt.query, sources(res.Results), tt.wantFirst)
			}
		})
	}
}

func TestSnippetsOfLongDocs(t *testing.T) {
	body := "# Runbook\n\n" + strings.Repeat("Nothing to see in this paragraph, keep reading.\n\n", 20) +
		"When the queue backs up, the worker retries with exponential backoff.\n\n" +
		strings.Repeat("More filler text that does not matter at all.\n", 20)
	reg := &capability.Registry{Capabilities: []*capability.Capability{{
		ID: "ops", Name: "Ops", Module: "ops",
		Docs: []capability.Doc{{Name: "runbook", Title: "Runbook", Body: body}},
	}}}
	x := openFixture(t, reg)
	res, err := x.Search(t.Context(), Request{Query: "worker backoff"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Results) != 1 {
		t.Fatalf("hits %q, want the runbook", sources(res.Results))
	}
	s := res.Results[0].Snippet
	if n := utf8.RuneCountInString(s); n > SnippetChars {
		t.Errorf("snippet has %d characters, want at most %d", n, SnippetChars)
	}
	for _, want := range []string{"**worker**", "**backoff**", "…"} {
		if !strings.Contains(s, want) {
			t.Errorf("snippet %q does not contain %q", s, want)
		}
	}
	if strings.ContainsAny(s, "\n\t") || strings.Contains(s, "  ") {
		t.Errorf("snippet %q has uncollapsed white space", s)
	}
}
