package query

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/search"
)

// spansOf returns the spans of every occurrence of each word in text, as
// the index would report them, one term per word.
func spansOf(text string, words ...string) search.TermLocationMap {
	m := search.TermLocationMap{}
	for _, w := range words {
		for off := 0; ; {
			i := strings.Index(text[off:], w)
			if i < 0 {
				break
			}
			s := off + i
			m.AddLocation(w, &search.Location{Start: uint64(s), End: uint64(s + len(w))})
			off = s + len(w)
		}
	}
	return m
}

func TestSnippet(t *testing.T) {
	long := strings.Repeat("Filler words about nothing in particular. ", 30)
	tests := []struct {
		name  string
		text  string
		words []string
		limit int
		want  string
	}{
		{
			name: "short text shown whole, white space collapsed",
			text: "# Tasks\n\nTrack   tasks\tin a file.\n", words: []string{"tasks"}, limit: 240,
			want: "# Tasks Track **tasks** in a file.",
		},
		{
			name: "no match: the beginning",
			text: "First words.\n\nSecond paragraph.", limit: 240,
			want: "First words. Second paragraph.",
		},
		{
			name: "no match, long: cut at a word with an ellipsis",
			text: long, limit: 30,
			want: "Filler words about nothing in…",
		},
		{
			name: "match far in: context before it, ellipses both sides",
			text: long + "The retry backoff doubles. " + long, words: []string{"retry", "backoff"}, limit: 60,
			want: "…The **retry** **backoff** doubles. Filler words about…",
		},
		{
			name:  "the window with the most distinct words wins over repeats",
			text:  "cache cache cache cache. " + long + "cache and queue together. " + long,
			words: []string{"cache", "queue"}, limit: 50,
			want: "…**cache** and **queue** together. Filler words…",
		},
		{
			name: "no marks inside a code span",
			text: "Call `getJson(url)` to fetch json, or ``a `getJson` b``.", words: []string{"getJson", "json"}, limit: 240,
			want: "Call `getJson(url)` to fetch **json**, or ``a `getJson` b``.",
		},
		{
			name: "no marks inside a fenced block, closed or not",
			text: "Use getJson:\n\n```ts\nimport { getJson } from \"http\";\n```\n\nthen getJson again.\n~~~\ngetJson", words: []string{"getJson"}, limit: 240,
			want: "Use **getJson**: ```ts import { getJson } from \"http\"; ``` then **getJson** again. ~~~ getJson",
		},
		{
			// Code is looked for near the window only, unless white space
			// collapsed brings text from far beyond it into the snippet.
			name: "no marks in code that long white space brings into the window",
			text: "getJson first." + strings.Repeat(" ", 400) + "\n```\ngetJson()\n```\n", words: []string{"getJson"}, limit: 60,
			want: "**getJson** first. ``` getJson() ```",
		},
		{
			name: "an unclosed backtick is text",
			text: "a ` b getJson", words: []string{"getJson"}, limit: 240,
			want: "a ` b **getJson**",
		},
		{
			name:  "multi-byte text is never split",
			text:  strings.Repeat("日本語のテキスト。", 20) + "検索" + strings.Repeat("ですね。", 20),
			words: []string{"検索"}, limit: 20,
			want: "…キスト。**検索**ですね。ですね。…",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spans, terms := matchSpans(tt.text, spansOf(tt.text, tt.words...))
			got := snippet(tt.text, spans, terms, tt.limit)
			if got != tt.want {
				t.Errorf("snippet() =\n%q\nwant\n%q", got, tt.want)
			}
			if n := utf8.RuneCountInString(got); n > tt.limit {
				t.Errorf("snippet() has %d characters, limit %d", n, tt.limit)
			}
			if !utf8.ValidString(got) {
				t.Errorf("snippet() is not valid UTF-8: %q", got)
			}
		})
	}
}

func TestSkipHeading(t *testing.T) {
	tests := []struct {
		name, text string
		words      []string
		want       string
	}{
		{name: "heading without a match", text: "# Setup\n\nSet the file.", words: []string{"file"}, want: "Set the **file**."},
		{name: "heading with a match", text: "# Setup file\n\nSet the file.", words: []string{"file"}, want: "# Setup **file** Set the **file**."},
		{name: "no match at all", text: "# Setup\n\nSet the file.", want: "Set the file."},
		{name: "not a heading", text: "Setup\n\nSet the file.", want: "Setup Set the file."},
		{name: "only a heading", text: "# Setup", want: "# Setup"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spans, terms := matchSpans(tt.text, spansOf(tt.text, tt.words...))
			text, spans := skipHeading(tt.text, spans)
			if got := snippet(text, spans, terms, SnippetChars); got != tt.want {
				t.Errorf("snippet = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestMatchSpansIgnoresBadLocations(t *testing.T) {
	text := "héllo world"
	locs := search.TermLocationMap{
		"a": {{Start: 2, End: 3}},  // inside the two bytes of é
		"b": {{Start: 6, End: 99}}, // past the end
		"c": {{Start: 5, End: 5}},  // empty
		"d": {{Start: 7, End: 12}}, // "world"
		"e": {{Start: 8, End: 10}}, // inside "world": overlaps
	}
	spans, distinct := matchSpans(text, locs)
	if len(spans) != 1 || text[spans[0].start:spans[0].end] != "world" {
		t.Errorf("spans = %v, want only \"world\"", spans)
	}
	if distinct != 2 {
		t.Errorf("distinct = %d, want 2 (d and e)", distinct)
	}
}

func TestSnippetLimitHolds(t *testing.T) {
	// Every cut of a text full of marks and multi-byte characters stays
	// within the limit.
	text := strings.Repeat("ünïcode **task** tâches task\n\t", 40)
	spans, terms := matchSpans(text, spansOf(text, "task", "tâches"))
	for limit := 10; limit <= 260; limit += 7 {
		got := snippet(text, spans, terms, limit)
		if n := utf8.RuneCountInString(got); n > limit || !utf8.ValidString(got) {
			t.Fatalf("limit %d: %d characters, valid UTF-8 %v: %q", limit, n, utf8.ValidString(got), got)
		}
	}
}
