package query

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/omnidev/omnidev/internal/capability"
	"github.com/omnidev/omnidev/internal/capability/captest"
)

// BenchmarkRecall measures how often a search finds the document a query was
// drawn from, on a corpus nobody here wrote: the Markdown files of the Go
// modules this module depends on, read from the module cache (present on any
// machine that built the module), one capability per module, one doc per
// "## " section. Queries are rare words of a doc (in at most 3 docs, 7 to
// 14 letters) as written, with one typo, cut to their first 70%, and two of
// them together. Each class reports its recall as a percentage.
//
// The corpus depends only on which of go.sum's modules the cache holds: the
// files are read in sorted order up to a fixed number of docs, and the
// queries are picked by a hash of the doc and word, not at random.
//
// OMNIDEV_RECALL_CORPUS names another corpus: a folder with one subfolder
// per capability, whose Markdown files are read the same way.
// scripts/npm-readmes.sh fetches one, the READMEs of popular npm packages.
//
// It set allWordsBoost (plan.go): without that clause, two-rare-word
// queries found their doc in the top 3 95–96% of the time; with the boost
// at 1, 97%; at 3, 98.7%; at 10, 99% (2026-11).
func BenchmarkRecall(b *testing.B) {
	reg, docs := recallCorpus(b)
	x, err := Open(b.Context(), b.TempDir(), reg, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	classes := recallQueries(docs)
	for b.Loop() {
		for _, c := range classes {
			found := 0
			for _, q := range c.queries {
				res, err := x.Search(b.Context(), Request{Query: q.text, Limit: c.top})
				if err != nil {
					b.Fatalf("Search(%q): %v", q.text, err)
				}
				for _, h := range res.Results {
					if h.Source == q.want {
						found++
						break
					}
				}
			}
			b.ReportMetric(100*float64(found)/float64(len(c.queries)), c.name+"-%")
		}
	}
	b.ReportMetric(float64(len(docs)), "docs")
}

const (
	// recallMaxDocs caps the corpus; recallMinDocs is what a meaningful
	// figure needs.
	recallMaxDocs = 1200
	recallMinDocs = 400
	// recallMaxQueries caps each class.
	recallMaxQueries = 300
)

// recallDoc is one section of a module's Markdown file.
type recallDoc struct {
	source string
	text   string
}

// recallCorpus reads the corpus (see BenchmarkRecall), failing with what to
// do when the module cache holds too little of it.
func recallCorpus(b *testing.B) (*capability.Registry, []recallDoc) {
	b.Helper()
	cache, mods, err := captest.CorpusDirs(os.Getenv("OMNIDEV_RECALL_CORPUS"), filepath.Join("..", "..", "go.sum"))
	if err != nil {
		b.Fatal(err)
	}
	reg := &capability.Registry{Root: cache, Profile: "default"}
	var docs []recallDoc
	for i, dir := range mods {
		if len(docs) >= recallMaxDocs {
			break
		}
		c := &capability.Capability{ID: fmt.Sprintf("mod%03d", i), Dir: dir}
		c.Module, c.Name = c.ID, filepath.Base(dir)
		secs, err := captest.MarkdownSections(dir, 2)
		if err != nil {
			b.Fatalf("read module cache: %v", err)
		}
		n := 0 // the section's number in its file
		for j, sec := range secs {
			if len(docs) >= recallMaxDocs {
				break
			}
			if j > 0 && sec.File != secs[j-1].File {
				n = 0
			}
			d := capability.Doc{Name: fmt.Sprintf("%s/%d", sec.File, n), Title: sec.Title, Body: sec.Body}
			n++
			c.Docs = append(c.Docs, d)
			docs = append(docs, recallDoc{source: source(KindDoc, c.ID, d.Name), text: d.Body})
		}
		if len(c.Docs) > 0 {
			reg.Capabilities = append(reg.Capabilities, c)
		}
	}
	if len(docs) < recallMinDocs {
		b.Fatalf("the module cache %s holds %d Markdown sections of this module's dependencies, want at least %d: run `go mod download` in the module's root first",
			cache, len(docs), recallMinDocs)
	}
	return reg, docs
}

type recallQuery struct{ text, want string }

type recallClass struct {
	name    string
	top     int
	queries []recallQuery
}

// recallQueries draws the queries of each class from docs.
func recallQueries(docs []recallDoc) []recallClass {
	words := make([][]string, len(docs)) // rare words of each doc, sorted
	df := map[string]int{}
	for i, d := range docs {
		words[i] = captest.Words(d.text)
		for _, w := range words[i] {
			df[w]++
		}
	}
	exact := recallClass{name: "exact", top: 10}
	typo := recallClass{name: "typo", top: 10}
	prefix := recallClass{name: "prefix", top: 10}
	pair := recallClass{name: "pair", top: 3}
	for i, d := range docs {
		var rare []string
		for _, w := range words[i] {
			if n := len(w); n >= 7 && n <= 14 && df[w] <= 3 {
				rare = append(rare, w)
			}
		}
		if len(rare) == 0 {
			continue
		}
		// Order by a hash, so that which words are picked does not follow
		// the alphabet.
		slices.SortFunc(rare, func(a, b string) int {
			return cmpHash(d.source+a, d.source+b)
		})
		w := rare[0]
		h := captest.Hash(d.source + w)
		exact.queries = append(exact.queries, recallQuery{w, d.source})
		typo.queries = append(typo.queries, recallQuery{captest.Typo(w, h), d.source})
		n := max(5, (7*len(w)+9)/10)
		prefix.queries = append(prefix.queries, recallQuery{w[:n], d.source})
		if len(rare) > 1 {
			pair.queries = append(pair.queries, recallQuery{w + " " + rare[1], d.source})
		}
	}
	out := []recallClass{exact, typo, prefix, pair}
	for i := range out {
		out[i].queries = out[i].queries[:min(len(out[i].queries), recallMaxQueries)]
	}
	return out
}

func cmpHash(a, b string) int {
	ha, hb := captest.Hash(a), captest.Hash(b)
	switch {
	case ha < hb:
		return -1
	case ha > hb:
		return 1
	}
	return strings.Compare(a, b)
}
