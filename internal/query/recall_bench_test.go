package query

import (
	"bufio"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/omnidev/omnidev/internal/capability"
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
func BenchmarkRecall(b *testing.B) {
	reg, docs := recallCorpus(b)
	x, err := Open(b.Context(), b.TempDir(), reg, nil)
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
	var cache string
	var mods []string
	if dir := os.Getenv("OMNIDEV_RECALL_CORPUS"); dir != "" {
		cache = dir
		entries, err := os.ReadDir(dir)
		if err != nil {
			b.Fatalf("read OMNIDEV_RECALL_CORPUS: %v", err)
		}
		for _, e := range entries {
			if e.IsDir() {
				mods = append(mods, filepath.Join(dir, e.Name()))
			}
		}
	} else {
		cache = os.Getenv("GOMODCACHE")
		if cache == "" {
			out, err := exec.Command("go", "env", "GOMODCACHE").Output()
			if err != nil {
				b.Fatalf("find the module cache: go env GOMODCACHE: %v", err)
			}
			cache = strings.TrimSpace(string(out))
		}
		var err error
		mods, err = cachedModules(filepath.Join("..", "..", "go.sum"), cache)
		if err != nil {
			b.Fatal(err)
		}
	}
	reg := &capability.Registry{Root: cache, Profile: "default"}
	var docs []recallDoc
	for i, dir := range mods {
		if len(docs) >= recallMaxDocs {
			break
		}
		c := &capability.Capability{ID: fmt.Sprintf("mod%03d", i), Dir: dir}
		c.Module, c.Name = c.ID, filepath.Base(dir)
		var files []string
		err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
			if err == nil && !e.IsDir() && strings.HasSuffix(path, ".md") {
				files = append(files, path)
			}
			return err
		})
		if err != nil {
			b.Fatalf("read module cache: %v", err)
		}
		slices.Sort(files)
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				b.Fatalf("read module cache: %v", err)
			}
			rel, _ := filepath.Rel(dir, f)
			for j, sec := range splitSections(string(data)) {
				if len(docs) >= recallMaxDocs {
					break
				}
				d := capability.Doc{
					Name:  fmt.Sprintf("%s/%d", filepath.ToSlash(strings.TrimSuffix(rel, ".md")), j),
					Title: sec.title,
					Body:  sec.body,
				}
				c.Docs = append(c.Docs, d)
				docs = append(docs, recallDoc{source: source(KindDoc, c.ID, d.Name), text: d.Body})
			}
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

// cachedModules returns the folders, sorted, of the modules go.sum lists
// (by the hash of their content, not only of their go.mod) that the module
// cache holds.
func cachedModules(gosum, cache string) ([]string, error) {
	f, err := os.Open(gosum)
	if err != nil {
		return nil, fmt.Errorf("read the module's go.sum: %w", err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 3 || strings.HasSuffix(fields[1], "/go.mod") {
			continue
		}
		dir := filepath.Join(cache, escapeModule(fields[0])+"@"+escapeModule(fields[1]))
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			out = append(out, dir)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), sc.Err()
}

// escapeModule applies the module cache's case encoding: "!" and the lower
// case letter for each upper case one.
func escapeModule(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsUpper(r) {
			b.WriteByte('!')
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

type section struct{ title, body string }

// splitSections splits Markdown at its "## " headings; the text before the
// first one is a section too, when it holds anything.
func splitSections(md string) []section {
	var out []section
	var cur strings.Builder
	title := ""
	flush := func() {
		if body := cur.String(); strings.TrimSpace(body) != "" {
			out = append(out, section{title: title, body: body})
		}
		cur.Reset()
	}
	for line := range strings.Lines(md) {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			flush()
			title = strings.TrimSpace(h)
		} else if h, ok := strings.CutPrefix(line, "# "); ok && title == "" {
			title = strings.TrimSpace(h)
		}
		cur.WriteString(line)
	}
	flush()
	return out
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
		seen := map[string]bool{}
		for w := range strings.FieldsFuncSeq(d.text, func(r rune) bool { return r > unicode.MaxASCII || !unicode.IsLetter(r) }) {
			w = strings.ToLower(w)
			if !seen[w] {
				seen[w] = true
				df[w]++
			}
		}
		for w := range seen {
			words[i] = append(words[i], w)
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
		h := hashOf(d.source + w)
		exact.queries = append(exact.queries, recallQuery{w, d.source})
		typo.queries = append(typo.queries, recallQuery{withTypo(w, h), d.source})
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

// withTypo returns w with one edit chosen by h: a deletion, a swap of two
// neighbours or a substitution, never of the first letter.
func withTypo(w string, h uint64) string {
	b := []byte(w)
	pos := 1 + int(h>>8)%(len(b)-2)
	switch h % 3 {
	case 0:
		return string(slices.Delete(b, pos, pos+1))
	case 1:
		if b[pos] == b[pos+1] { // a swap would change nothing
			return string(slices.Delete(b, pos, pos+1))
		}
		b[pos], b[pos+1] = b[pos+1], b[pos]
	default:
		c := byte('a' + (h>>16)%26)
		if c == b[pos] {
			c = 'a' + (c-'a'+1)%26
		}
		b[pos] = c
	}
	return string(b)
}

func hashOf(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

func cmpHash(a, b string) int {
	ha, hb := hashOf(a), hashOf(b)
	switch {
	case ha < hb:
		return -1
	case ha > hb:
		return 1
	}
	return strings.Compare(a, b)
}
