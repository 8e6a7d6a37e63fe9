package query

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/omnidev/omnidev/internal/capability"
	"github.com/omnidev/omnidev/internal/capability/captest"
)

// Run with:
//
//	go test ./internal/query/ -run '^$' -bench . -benchtime 3s
//
// The corpus is captest's default: 40 capabilities, each with 50 docs
// (definition.md included), a skill and a rule of 1–3 KB: 2,120 documents
// with the capabilities themselves. Its words follow Zipf's law over a
// vocabulary of about 4,100, so the common words searched for stand in most
// documents (captest.Options{Uniform: true} puts every word in every one).

// benchQueries mixes single words, pairs and typos of captest's vocabulary.
var benchQueries = []string{
	"task", "repository", "deployment", "latency", "schema", "tracking",
	"task tracking", "search index", "config profile", "retry backoff", "database migration",
	"taks", "serach", "confgiuration", "deplyo", "scheudle", "reposiotry",
}

// BenchmarkBuild builds the index of the corpus from nothing, with the
// process's own collector settings ("gc=process") and with its target
// raised to 400 while the build runs, as cmd/omnidev does through
// Options.OnBuild ("gc=400"). What the figures set, on 2026-11-24:
//   - GOGC 400 during a build of 2,000 docs: a fifth less time for a tenth
//     more peak RSS (commit 2ee8743);
//   - buildBatchDocs: one batch of 2,000 docs took the server's RSS to
//     350 MB, 100 MB once its garbage was returned; batches of 1,000 made
//     the same build a quarter slower (commits 19bb853, 7227337).
func BenchmarkBuild(b *testing.B) {
	reg := benchRegistry(b)
	root := b.TempDir()
	n := 0
	raise := func() func(int) {
		old := debug.SetGCPercent(400)
		return func(int) { debug.SetGCPercent(old) }
	}
	for _, gc := range []struct {
		name    string
		onBuild func() func(int)
	}{{"process", nil}, {"400", raise}} {
		b.Run("gc="+gc.name, func(b *testing.B) {
			for b.Loop() {
				n++
				x, err := Open(b.Context(), filepath.Join(root, strconv.Itoa(n)), reg, Options{OnBuild: gc.onBuild})
				if err != nil {
					b.Fatal(err)
				}
				if st := x.Stats(); st.Added != benchDocs(reg) {
					b.Fatalf("added %d documents, want %d", st.Added, benchDocs(reg))
				}
				if err := x.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkReopen(b *testing.B) {
	reg := benchRegistry(b)
	dir := b.TempDir()
	x, err := Open(b.Context(), dir, reg, Options{})
	if err != nil {
		b.Fatal(err)
	}
	x.Close()
	for b.Loop() {
		x, err := Open(b.Context(), dir, reg, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if st := x.Stats(); st.Unchanged != benchDocs(reg) || st.Rebuilt {
			b.Fatalf("reopen did work: %+v", st)
		}
		if err := x.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSearch measures Search over the captest corpus. Its
// "expansion=bleve" runs widen the words with bleve's own prefix and fuzzy
// queries and locate the page's terms with bleve's own second pass, instead
// of through the index reader (expand.go, locate.go): the figures doc.go
// gives for keeping those two pieces. Searching unquoted words as a phrase
// too (plan.go does not) cost a quarter of a two-word query here, and
// changed no figure of BenchmarkRecall.
func BenchmarkSearch(b *testing.B) {
	x, err := Open(b.Context(), b.TempDir(), benchRegistry(b), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	for _, expansion := range []string{"dictionary", "bleve"} {
		for _, limit := range []int{10, 100} {
			b.Run(fmt.Sprintf("expansion=%s/limit=%d", expansion, limit), func(b *testing.B) {
				var lat []time.Duration
				i := 0
				for b.Loop() {
					q := benchQueries[i%len(benchQueries)]
					i++
					start := time.Now()
					res, err := x.search(b.Context(), Request{Query: q, Limit: limit}, expansion == "bleve")
					lat = append(lat, time.Since(start))
					if err != nil {
						b.Fatal(err)
					}
					if len(res.Results) == 0 {
						b.Fatalf("%q: no hits", q)
					}
				}
				reportPercentiles(b, lat)
			})
		}
	}
}

func BenchmarkUpdateOneDoc(b *testing.B) {
	reg := benchRegistry(b)
	x, err := Open(b.Context(), b.TempDir(), reg, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	i := 0
	for b.Loop() {
		i++
		next := withDocBody(reg, 7, 3, fmt.Sprintf("# Edited\n\nEdit number %d of this doc.\n", i))
		st, err := x.Update(b.Context(), next)
		if err != nil {
			b.Fatal(err)
		}
		if st.Updated != 1 || st.Added != 0 || st.Removed != 0 {
			b.Fatalf("update did not touch exactly one document: %+v", st)
		}
	}
}

// withDocBody returns a copy of reg whose capability c has doc d's body
// replaced; reg itself is left as it is (registries are immutable).
func withDocBody(reg *capability.Registry, c, d int, body string) *capability.Registry {
	next := *reg
	next.Capabilities = slices.Clone(reg.Capabilities)
	capCopy := *next.Capabilities[c]
	capCopy.Docs = slices.Clone(capCopy.Docs)
	capCopy.Docs[d].Body = body
	next.Capabilities[c] = &capCopy
	return &next
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	at := func(p float64) float64 {
		return float64(lat[int(p*float64(len(lat)-1))].Microseconds())
	}
	b.ReportMetric(at(0.50), "p50-µs")
	b.ReportMetric(at(0.99), "p99-µs")
}

func benchDocs(reg *capability.Registry) int {
	return len(documents(reg))
}

// benchRegistry generates captest's default tree and reads it into a
// Registry. It reads the generated files itself rather than calling
// capability.Load, so that these figures measure this package alone.
func benchRegistry(b testing.TB) *capability.Registry {
	b.Helper()
	root := b.TempDir()
	ids, err := captest.Generate(root, captest.Options{})
	if err != nil {
		b.Fatal(err)
	}
	reg := &capability.Registry{Root: root, Profile: "default"}
	for _, id := range ids {
		c, err := readGenerated(filepath.Join(root, "omni", "capabilities", id))
		if err != nil {
			b.Fatal(err)
		}
		reg.Capabilities = append(reg.Capabilities, c)
	}
	return reg
}

// readGenerated reads a capability folder written by captest.Generate, whose
// shape it knows exactly.
func readGenerated(dir string) (*capability.Capability, error) {
	read := func(rel string) (string, error) {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		return string(data), err
	}
	toml, err := read("capability.toml")
	if err != nil {
		return nil, err
	}
	c := &capability.Capability{Dir: dir, Entry: "index.ts"}
	sc := bufio.NewScanner(strings.NewReader(toml))
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), " = ")
		if !ok {
			continue
		}
		s, err := strconv.Unquote(val)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", dir, key, err)
		}
		switch key {
		case "id":
			c.ID, c.Module = s, s
		case "name":
			c.Name = s
		case "version":
			c.Version = s
		case "description":
			c.Description = s
		}
	}
	if c.Types, err = read("types.d.ts"); err != nil {
		return nil, err
	}
	doc := func(name, rel string) (capability.Doc, error) {
		body, err := read(rel)
		title, _, _ := strings.Cut(strings.TrimPrefix(body, "# "), "\n")
		return capability.Doc{Name: name, Title: title, Body: body, Path: rel}, err
	}
	def, err := doc(capability.DefinitionDoc, "definition.md")
	if err != nil {
		return nil, err
	}
	var docs []capability.Doc
	err = filepath.WalkDir(filepath.Join(dir, "docs"), func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		rel = filepath.ToSlash(rel)
		d, err := doc(strings.TrimSuffix(strings.TrimPrefix(rel, "docs/"), ".md"), rel)
		docs = append(docs, d)
		return err
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(docs, func(a, b capability.Doc) int { return strings.Compare(a.Name, b.Name) })
	c.Docs = append([]capability.Doc{def}, docs...)
	rule, err := doc("naming", "rules/naming.md")
	if err != nil {
		return nil, err
	}
	c.Rules = []capability.Doc{rule}
	skill, err := read("skills/use/SKILL.md")
	if err != nil {
		return nil, err
	}
	front, body, _ := strings.Cut(strings.TrimPrefix(skill, "---\n"), "\n---\n")
	s := capability.Skill{Body: strings.TrimLeft(body, "\n"), Path: "skills/use/SKILL.md"}
	for line := range strings.SplitSeq(front, "\n") {
		if v, ok := strings.CutPrefix(line, "name: "); ok {
			s.Name = v
		} else if v, ok := strings.CutPrefix(line, "description: "); ok {
			s.Description = v
		}
	}
	c.Skills = []capability.Skill{s}
	return c, nil
}
