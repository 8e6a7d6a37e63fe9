package query

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/search"
)

// SnippetChars bounds a snippet, in characters (runes), marks and ellipses
// included.
const SnippetChars = 240

const (
	markOpen  = "**"
	markClose = "**"
	ellipsis  = "…"
)

// span is the byte range of a matched word in a field's text, and which of
// the matched terms it is.
type span struct{ start, end, term int }

// snippetOf cuts the snippet of a returned hit from the stored field where
// the most distinct terms matched: the description when it ties with the
// body, since it is the summary. A hit that matched only in its name or
// title gets the beginning of its description, else of its body.
func snippetOf(h *search.DocumentMatch) string {
	bestText, bestSpans, bestTerms := "", []span(nil), 0
	for _, f := range snippetFields {
		text := storedString(h, f)
		if text == "" {
			continue
		}
		if bestText == "" {
			bestText = text
		}
		terms := h.Locations[f]
		if len(terms) <= bestTerms {
			continue // cannot beat the best, even if every term is valid
		}
		spans, n := matchSpans(text, terms)
		if n > bestTerms {
			bestText, bestSpans, bestTerms = text, spans, n
		}
	}
	text, spans := skipHeading(bestText, bestSpans)
	return snippet(text, spans, bestTerms, SnippetChars)
}

// skipHeading drops the Markdown heading a text starts with ("# Title"),
// which repeats the hit's title, unless a match is in it.
func skipHeading(text string, spans []span) (string, []span) {
	if !strings.HasPrefix(text, "#") {
		return text, spans
	}
	end := strings.IndexByte(text, '\n')
	if end < 0 || (len(spans) > 0 && spans[0].start <= end) {
		return text, spans
	}
	end++
	shifted := make([]span, len(spans))
	for i, s := range spans {
		shifted[i] = span{s.start - end, s.end - end, s.term}
	}
	return text[end:], shifted
}

// matchSpans turns bleve's term locations into sorted, disjoint spans that
// are valid for text, and counts the distinct terms they mark.
func matchSpans(text string, terms search.TermLocationMap) ([]span, int) {
	n := 0
	for _, locs := range terms {
		n += len(locs)
	}
	spans := make([]span, 0, n)
	distinct := 0
	// In term order, so that the same hit always gives the same snippet.
	for _, term := range slices.Sorted(maps.Keys(terms)) {
		found := false
		for _, l := range terms[term] {
			s, e := int(l.Start), int(l.End)
			if s < 0 || e > len(text) || s >= e ||
				!utf8.RuneStart(text[s]) || (e < len(text) && !utf8.RuneStart(text[e])) {
				continue // not an offset into this text: never split a rune
			}
			spans = append(spans, span{s, e, distinct})
			found = true
		}
		if found {
			distinct++
		}
	}
	slices.SortStableFunc(spans, func(a, b span) int {
		return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(b.end, a.end))
	})
	// Drop what overlaps an earlier span: one word can match two terms of
	// the query (itself and a typo of another word).
	out := spans[:0]
	for _, s := range spans {
		if len(out) > 0 && s.start < out[len(out)-1].end {
			continue
		}
		out = append(out, s)
	}
	return out, distinct
}

// snippet renders at most limit runes of text around its best cluster of
// spans, which mark terms numbered from 0 to terms-1: white space
// collapsed, spans marked, "…" where text was cut. Spans inside code (a
// fenced block or a `code span`) are not marked: an agent copies code, and
// marks inside it would make it wrong.
func snippet(text string, spans []span, terms, limit int) string {
	start, first := 0, 0
	if len(spans) > 0 {
		first = bestWindow(spans, terms, limit)
		// Some context before the first match; more when what follows it
		// is short, so that a short text is shown whole.
		lead := max(limit/5, limit-runesUpTo(text[spans[first].start:], limit))
		start = leadStart(text, spans[first].start, lead)
	}
	// Code is looked for up to the end of the line where limit runes from
	// start end, or would without white space collapsed: what follows
	// cannot change what is code before it. Past that, in the rare text
	// whose white space runs long, the whole text is looked at.
	codeEnd := min(len(text), start+4*limit)
	if nl := strings.IndexByte(text[codeEnd:], '\n'); nl >= 0 {
		codeEnd += nl + 1
	} else {
		codeEnd = len(text)
	}
	code := codeRanges(text[:codeEnd])
	spans = spans[first:]

	var b strings.Builder
	b.Grow(min(len(text)-start, 4*limit) + len(ellipsis))
	n := 0 // runes written
	if start > 0 {
		b.WriteString(ellipsis)
		n++
	}
	// budget keeps room for a closing ellipsis.
	budget := limit - utf8.RuneCountInString(ellipsis)
	space := false // a space is pending: written only before more text
	i := start
	truncated, partial := false, false
	for i < len(text) {
		if len(spans) > 0 && i == spans[0].start && spans[0].start >= codeEnd {
			code, codeEnd = codeRanges(text), len(text)
		}
		if len(spans) > 0 && i == spans[0].start && inRanges(code, spans[0].start) {
			spans = spans[1:] // written as plain text below
			continue
		}
		if len(spans) > 0 && i == spans[0].start {
			s := spans[0]
			word := text[s.start:s.end]
			need := utf8.RuneCountInString(word) + utf8.RuneCountInString(markOpen+markClose)
			if space {
				need++
			}
			if n+need > budget {
				truncated = true
				break
			}
			if space {
				b.WriteByte(' ')
				space = false
			}
			b.WriteString(markOpen + word + markClose)
			n += need
			i = s.end
			spans = spans[1:]
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		if unicode.IsSpace(r) {
			space = b.Len() > 0
			i += size
			continue
		}
		need := 1
		if space {
			need++
		}
		if n+need > budget {
			truncated, partial = true, !space
			break
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteString(text[i : i+size])
		n += need
		i += size
	}
	out := b.String()
	if partial {
		out = trimPartialWord(out)
	}
	if truncated {
		out += ellipsis
	}
	return out
}

// bestWindow returns the index of the first span of the window of text,
// about limit long, that holds the most distinct terms, then the most spans.
// The spans' terms are numbered from 0 to terms-1.
func bestWindow(spans []span, terms, limit int) int {
	// Bytes stand in for runes here: text is mostly ASCII, and a window a
	// little short of the limit only leaves more context around it. Marks
	// take room too; assume a handful of them.
	width := limit - 6*len(markOpen+markClose)
	counts := make([]int, terms) // spans of each term in the window
	distinct := 0                // terms with spans in the window
	best, bestDistinct, bestCount := 0, 0, 0
	j := 0
	for i := range spans {
		if j <= i {
			j = i
			clear(counts)
			distinct = 0
		}
		for j < len(spans) && spans[j].end-spans[i].start <= width {
			if counts[spans[j].term]++; counts[spans[j].term] == 1 {
				distinct++
			}
			j++
		}
		if c := j - i; distinct > bestDistinct || (distinct == bestDistinct && c > bestCount) {
			best, bestDistinct, bestCount = i, distinct, c
		}
		if j > i { // spans[i] leaves the window
			if counts[spans[i].term]--; counts[spans[i].term] == 0 {
				distinct--
			}
		}
	}
	return best
}

// runesUpTo counts the runes of s, up to limit: bodies can be long, and
// only whether they are shorter than a snippet matters.
func runesUpTo(s string, limit int) int {
	n := 0
	for range s {
		if n++; n == limit {
			break
		}
	}
	return n
}

// leadStart returns where a snippet whose first match is at pos starts: up
// to lead runes earlier, at the beginning of a word when there is white
// space to find one (scripts written without spaces start at any rune).
func leadStart(text string, pos, lead int) int {
	start := pos
	for k := 0; k < lead && start > 0; k++ {
		_, size := utf8.DecodeLastRuneInString(text[:start])
		start -= size
	}
	if start == 0 {
		return 0
	}
	for i, r := range text[start:pos] {
		if unicode.IsSpace(r) {
			return start + i + utf8.RuneLen(r)
		}
	}
	return start
}

// trimPartialWord removes the word cut in the middle at the end of s,
// unless that would remove a mark or most of s.
func trimPartialWord(s string) string {
	i := strings.LastIndexFunc(s, unicode.IsSpace)
	if i < len(s)/2 || strings.Contains(s[i:], markClose) {
		return s
	}
	return s[:i]
}

// codeRanges returns the byte ranges of text that are code in Markdown, in
// order: fenced blocks (from a line starting with ``` or ~~~ to the next
// such line, or the end) and code spans (from a run of backticks to the
// next run of the same length on the same line; an unclosed run is text).
func codeRanges(text string) [][2]int {
	if strings.IndexByte(text, '`') < 0 && strings.IndexByte(text, '~') < 0 {
		return nil
	}
	var out [][2]int
	fence := -1 // start of the open fenced block
	var fenceMark string
	for lineStart := 0; lineStart < len(text); {
		lineEnd := strings.IndexByte(text[lineStart:], '\n')
		if lineEnd < 0 {
			lineEnd = len(text)
		} else {
			lineEnd += lineStart + 1
		}
		line := strings.TrimLeft(text[lineStart:lineEnd], " ")
		switch {
		case fence >= 0:
			if strings.HasPrefix(line, fenceMark) {
				out = append(out, [2]int{fence, lineEnd})
				fence = -1
			}
		case strings.HasPrefix(line, "```") || strings.HasPrefix(line, "~~~"):
			fence, fenceMark = lineStart, line[:3]
		default:
			out = append(out, codeSpans(text, lineStart, lineEnd)...)
		}
		lineStart = lineEnd
	}
	if fence >= 0 {
		out = append(out, [2]int{fence, len(text)})
	}
	return out
}

// codeSpans returns the code spans of text[start:end], one line: a span
// runs from a run of backticks to the next run of the same length.
func codeSpans(text string, start, end int) [][2]int {
	var out [][2]int
	open, openLen := -1, 0
	for i := start; i < end; {
		if text[i] != '`' {
			i++
			continue
		}
		j := i
		for j < end && text[j] == '`' {
			j++
		}
		switch {
		case open < 0:
			open, openLen = i, j-i
		case j-i == openLen:
			out = append(out, [2]int{open, j})
			open = -1
		}
		i = j
	}
	return out
}

// inRanges reports whether pos falls in one of ranges.
func inRanges(ranges [][2]int, pos int) bool {
	for _, r := range ranges {
		if pos >= r[0] && pos < r[1] {
			return true
		}
	}
	return false
}
