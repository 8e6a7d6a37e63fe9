package server_test

import (
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/omnidev/omnidev/internal/capability/captest"
	"github.com/omnidev/omnidev/internal/testrepo"
)

// corpusDocs is how many docs BenchmarkQueryCorpus serves, as the query
// and start-up targets are stated for.
const corpusDocs = 2000

// BenchmarkQueryCorpus is BenchmarkQuery's raw client and BenchmarkStartup
// on documentation nobody here wrote, where BenchmarkQuery's generated
// corpus makes every word it searches common: the Markdown of the module
// cache's modules that go.sum lists, or the folder OMNIDEV_RECALL_CORPUS
// names (scripts/npm-readmes.sh fetches one), split at "## " and "### "
// headings into at most 2,000 docs. Its queries are drawn from the docs:
// rare words as written, with a typo, cut to 70%, two of them, and common
// words, alone and in pairs.
func BenchmarkQueryCorpus(b *testing.B) {
	root := b.TempDir()
	docs, err := captest.WriteCorpus(root, corpusDirs(b), 3, corpusDocs)
	if err != nil {
		b.Fatal(err)
	}
	testrepo.Git(b, root, "init", "-q", "-b", "main")
	queries := corpusQueries(docs)
	b.Logf("%d docs, %d queries", len(docs), len(queries))
	b.Run("start", func(b *testing.B) {
		var cold, warm []time.Duration
		var rss []int
		for b.Loop() {
			os.RemoveAll(filepath.Join(root, ".omni", "index"))
			for _, lat := range []*[]time.Duration{&cold, &warm} {
				start := time.Now()
				s := startServer(b, root)
				if _, err := s.session.ListTools(b.Context(), nil); err != nil {
					b.Fatal(err)
				}
				*lat = append(*lat, time.Since(start))
				if lat == &cold {
					rss = append(rss, rssKB(b, s.cmd.Process.Pid, "VmRSS"))
				}
				s.session.Close()
			}
		}
		slices.Sort(rss)
		b.ReportMetric(percentile(cold, 50), "cold-ms")
		b.ReportMetric(percentile(warm, 50), "warm-ms")
		b.ReportMetric(float64(rss[len(rss)/2])/1024, "rss-MB")
	})
	b.Run("raw", func(b *testing.B) { rawQueries(b, root, queries) })
}

// corpusDirs returns the folders of BenchmarkQueryCorpus's corpus.
func corpusDirs(b testing.TB) []string {
	_, dirs, err := captest.CorpusDirs(os.Getenv("OMNIDEV_RECALL_CORPUS"), filepath.Join("..", "..", "go.sum"))
	if err != nil {
		b.Fatal(err)
	}
	return dirs
}

// corpusQueries draws 50 queries from docs: 10 rare words (in at most 3
// docs, 7–14 letters) as written, 10 with a typo, 10 cut to their first
// 70%, 5 pairs of rare words of one doc, 10 common words and 5 pairs of
// them (among the 50th to 150th most frequent words of 4 letters or
// more). Words are picked by a hash, not at random.
func corpusQueries(docs []string) []string {
	df := map[string]int{}
	perDoc := make([][]string, len(docs))
	for i, d := range docs {
		perDoc[i] = captest.Words(d)
		for _, w := range perDoc[i] {
			df[w]++
		}
	}
	byHash := func(ws []string, salt string) []string {
		return slices.SortedFunc(slices.Values(ws), func(a, b string) int {
			return cmp.Or(cmp.Compare(captest.Hash(salt+a), captest.Hash(salt+b)), strings.Compare(a, b))
		})
	}
	var rare []string // one per doc
	var pairs []string
	for i, ws := range perDoc {
		var r []string
		for _, w := range ws {
			if n := len(w); n >= 7 && n <= 14 && df[w] <= 3 {
				r = append(r, w)
			}
		}
		if len(r) == 0 {
			continue
		}
		r = byHash(r, docs[i][:min(len(docs[i]), 40)])
		rare = append(rare, r[0])
		if len(r) > 1 {
			pairs = append(pairs, r[0]+" "+r[1])
		}
	}
	var common []string
	for w := range df {
		if len(w) >= 4 {
			common = append(common, w)
		}
	}
	slices.SortFunc(common, func(a, b string) int { return cmp.Or(cmp.Compare(df[b], df[a]), strings.Compare(a, b)) })
	common = byHash(common[min(50, len(common)):min(150, len(common))], "common")
	rare = byHash(rare, "rare")
	pairs = byHash(pairs, "pairs")
	var qs []string
	for i, w := range rare[:min(30, len(rare))] {
		switch i / 10 {
		case 0:
			qs = append(qs, w)
		case 1:
			qs = append(qs, captest.Typo(w, captest.Hash(w)))
		default:
			qs = append(qs, w[:max(5, (7*len(w)+9)/10)])
		}
	}
	qs = append(qs, pairs[:min(5, len(pairs))]...)
	for i := 0; i < 20 && i < len(common); i++ {
		if i < 10 {
			qs = append(qs, common[i])
		} else if i%2 == 0 && i+1 < len(common) {
			qs = append(qs, common[i]+" "+common[i+1])
		}
	}
	return qs
}
