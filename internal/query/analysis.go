package query

import (
	"bytes"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	unicodetok "github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
	"github.com/blevesearch/bleve/v2/registry"
	porterstemmer "github.com/blevesearch/go-porterstemmer"
)

// Analysis. Every text field holds, at each position, the word as written
// (lower-cased) and its Porter stem when that differs: a search for the
// exact form finds it before the stem's other relatives ("rendering" is rare
// where "render" is common), a search for one form still finds the others,
// and typos and prefixes are matched against words people write, not
// against stems ("configuraton" is one edit from "configuration" but four
// from "configur").
//
// Code identifiers are indexed whole and in parts, at the same position:
// "os.ReadFile" as os.readfile, os, readfile, read, file; "parseConfig" as
// parseconfig, parse, config; "max_output_bytes" as max_output_bytes, max,
// output, bytes. (Unicode word breaking already splits at slashes and keeps
// dots and underscores between letters.) Queries are analyzed the same way.
const (
	// textAnalyzer analyzes the indexed fields.
	textAnalyzer = "omnidev_text"
	// wordsAnalyzer is textAnalyzer without the stems: the words of a query,
	// which are stemmed one by one (see stem).
	wordsAnalyzer = "omnidev_words"
	// partsFilter and stemsFilter are the token filters of this file.
	partsFilter = "omnidev_identifier_parts"
	stemsFilter = "omnidev_keep_and_stem"
)

// bleve finds analyzers and token filters by name in a registry of its own,
// global to the process: that is how the mapping stored with an index names
// them, and how bleve's own analyzers are registered.
func init() {
	if err := registry.RegisterTokenFilter(partsFilter, func(map[string]any, *registry.Cache) (analysis.TokenFilter, error) {
		return identifierParts{}, nil
	}); err != nil {
		panic(err)
	}
	if err := registry.RegisterTokenFilter(stemsFilter, func(map[string]any, *registry.Cache) (analysis.TokenFilter, error) {
		return keepAndStem{}, nil
	}); err != nil {
		panic(err)
	}
}

// analyzerConfig is the custom analyzer of the mapping with the given
// token filters after the ones every analyzer shares.
func analyzerConfig(extra ...string) map[string]any {
	filters := []any{partsFilter, en.PossessiveName, lowercase.Name, en.StopName}
	for _, f := range extra {
		filters = append(filters, f)
	}
	return map[string]any{
		"type":          "custom",
		"tokenizer":     unicodetok.Name,
		"token_filters": filters,
	}
}

// identifierParts adds, after each token that is a code identifier, its
// parts at the same position: split at dots and underscores, then at the
// humps of camelCase. It runs before lower-casing, which hides the humps.
type identifierParts struct{}

func (identifierParts) Filter(in analysis.TokenStream) analysis.TokenStream {
	var out analysis.TokenStream
	for i, t := range in {
		var parts [][2]int
		if mayHaveParts(t.Term) {
			parts = identifierSplit(t.Term)
		}
		if len(parts) == 0 {
			if out != nil {
				out = append(out, t)
			}
			continue
		}
		if out == nil {
			out = append(make(analysis.TokenStream, 0, len(in)+len(parts)), in[:i]...)
		}
		out = append(out, t)
		for _, p := range parts {
			out = append(out, &analysis.Token{
				Start: t.Start + p[0],
				End:   t.Start + p[1],
				// A copy: the filters after this one may change terms in place.
				Term:     append([]byte(nil), t.Term[p[0]:p[1]]...),
				Position: t.Position,
				Type:     t.Type,
			})
		}
	}
	if out == nil {
		return in
	}
	return out
}

// mayHaveParts reports whether term may be an identifier with parts: it
// holds a dot, an underscore, an upper-case letter after its first, or
// anything but ASCII (left to identifierSplit).
func mayHaveParts(term []byte) bool {
	for i, b := range term {
		if b == '.' || b == '_' || b >= utf8.RuneSelf || (i > 0 && 'A' <= b && b <= 'Z') {
			return true
		}
	}
	return false
}

// identifierSplit returns the byte ranges of the parts of term, or none when
// it is one plain word: first the pieces between dots and underscores
// (when they are not the whole term), then the humps of each piece (when it
// has several).
// Pieces without a letter are left out.
func identifierSplit(term []byte) [][2]int {
	var parts [][2]int
	pieces := splitAt(term, func(b byte) bool { return b == '.' || b == '_' })
	for _, p := range pieces {
		if (len(pieces) > 1 || p[1]-p[0] < len(term)) && hasLetter(term[p[0]:p[1]]) {
			parts = append(parts, p)
		}
		humps := camelHumps(term[p[0]:p[1]])
		if len(humps) > 1 {
			for _, h := range humps {
				parts = append(parts, [2]int{p[0] + h[0], p[0] + h[1]})
			}
		}
	}
	return parts
}

func splitAt(s []byte, sep func(byte) bool) [][2]int {
	var out [][2]int
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || sep(s[i]) {
			if i > start {
				out = append(out, [2]int{start, i})
			}
			start = i + 1
		}
	}
	return out
}

func hasLetter(s []byte) bool {
	for _, r := range string(s) {
		if unicode.IsLetter(r) {
			return true
		}
	}
	return false
}

// camelHumps splits s where a lower-case letter or digit is followed by an
// upper-case one ("parseConfig": parse, Config), and before the last
// upper-case letter of a run that a lower-case one follows ("HTTPServer":
// HTTP, Server).
func camelHumps(s []byte) [][2]int {
	var out [][2]int
	start := 0
	var before rune
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRune(s[i:])
		if i > start {
			next, _ := utf8.DecodeRune(s[i+size:]) // RuneError at the end
			lowerToUpper := unicode.IsUpper(r) && (unicode.IsLower(before) || unicode.IsDigit(before))
			acronymEnd := unicode.IsUpper(before) && unicode.IsUpper(r) && unicode.IsLower(next)
			if lowerToUpper || acronymEnd {
				out = append(out, [2]int{start, i})
				start = i
			}
		}
		before = r
		i += size
	}
	return append(out, [2]int{start, len(s)})
}

// keepAndStem adds, after each token, its Porter stem at the same position
// when the stem differs from it.
type keepAndStem struct{}

func (keepAndStem) Filter(in analysis.TokenStream) analysis.TokenStream {
	out := make(analysis.TokenStream, 0, 2*len(in))
	for _, t := range in {
		out = append(out, t)
		if s := stem(t.Term); string(s) != string(t.Term) {
			st := *t
			st.Term = s
			out = append(out, &st)
		}
	}
	return out
}

// stem returns the Porter stem of a lower-case word, as bleve's "en"
// analyzer computes it: term itself when the stem is the same, else a new
// slice. (bleve's porter filter allocates several times per token, which
// made stemming a third of the analysis of a build.)
func stem(term []byte) []byte {
	var runes [64]rune
	rs := runes[:0]
	for _, r := range string(term) {
		rs = append(rs, r)
	}
	rs = porterstemmer.StemWithoutLowerCasing(rs)
	var out [64]byte
	b := out[:0]
	for _, r := range rs {
		b = utf8.AppendRune(b, r)
	}
	if bytes.Equal(b, term) {
		return term
	}
	return append([]byte(nil), b...)
}
