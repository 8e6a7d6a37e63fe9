// Package captest generates capability folders for tests and benchmarks.
// It writes only below the directory it is given and never reads the
// environment (CorpusDirs asks `go env` where the module cache is), so
// tests that share it stay independent.
package captest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// words is the vocabulary generated docs are made of: real, stemmable English
// with a few project-specific terms, so ranking benchmarks exercise stems and typos.
var words = strings.Fields(`task tasks tracking track tracked repository file files
search searching index indexed query queries capability module modules import
export function returns string number promise async await config configuration
profile enable disable runtime sandbox execute execution program output error
errors handler request response cache caching deploy deployment build builds
test tests testing review reviewer commit branch merge conflict lint format
database table migration schema user users account token secret environment
variable variables report summary metric metrics latency throughput memory
worker queue schedule scheduled retry backoff timeout cancel cancellation
document documents markdown heading section skill skills rule rules naming`)

// Options shape a generated tree. Zero values take the defaults.
type Options struct {
	Capabilities int    // default 40
	DocsPerCap   int    // default 50
	Seed         uint64 // default 1
	// MinDocBytes and MaxDocBytes bound each doc's size (default 1024 and 3072).
	MinDocBytes, MaxDocBytes int
	// Uniform draws every word with the same probability from the small
	// vocabulary, so that nearly every doc holds nearly every word: the worst
	// case for a search engine. By default words follow Zipf's law over the
	// vocabulary and a long tail of rarer words, as in real prose.
	Uniform bool
}

// tailWords is the size of the generated long tail of the vocabulary.
const tailWords = 4000

// Generate writes omni/config.toml enabling every generated capability and
// omni/capabilities/capNN/ with capability.toml, index.ts, types.d.ts,
// definition.md, one skill, one rule and DocsPerCap-1 docs under docs/
// (a third of them one folder deep). It returns the capability ids.
func Generate(root string, o Options) ([]string, error) {
	if o.Capabilities == 0 {
		o.Capabilities = 40
	}
	if o.DocsPerCap == 0 {
		o.DocsPerCap = 50
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.MinDocBytes == 0 {
		o.MinDocBytes = 1024
	}
	if o.MaxDocBytes < o.MinDocBytes {
		o.MaxDocBytes = max(3072, o.MinDocBytes)
	}
	rng := rand.New(rand.NewPCG(o.Seed, o.Seed^0x9e3779b97f4a7c15))
	g := &gen{rng: rng, vocab: words}
	if !o.Uniform {
		g.vocab = append(slices.Clone(words), tail(rng, tailWords)...)
		// s=1.1 is close to what English text measures; v=2 flattens the head.
		g.zipf = rand.NewZipf(rand.New(rand.NewPCG(o.Seed+1, o.Seed)), 1.1, 2, uint64(len(g.vocab)-1))
	}
	ids := make([]string, o.Capabilities)
	for i := range ids {
		ids[i] = fmt.Sprintf("cap%02d", i)
	}
	files := map[string]string{
		"omni/config.toml": fmt.Sprintf("project = \"generated\"\n\n[capabilities]\nenable = [%s]\n", quoteList(ids)),
	}
	for i, id := range ids {
		dir := "omni/capabilities/" + id + "/"
		files[dir+"capability.toml"] = fmt.Sprintf(
			"[capability]\nid = %q\nname = \"Capability %d\"\nversion = \"0.1.0\"\ndescription = %q\n",
			id, i, g.sentence(12))
		files[dir+"index.ts"] = fmt.Sprintf("export function hello%d(): string {\n  return %q;\n}\n", i, id)
		files[dir+"types.d.ts"] = fmt.Sprintf("export function hello%d(): string;\n", i)
		files[dir+"definition.md"] = g.doc("Capability "+id, o)
		files[dir+"skills/use/SKILL.md"] = fmt.Sprintf("---\nname: use-%s\ndescription: %s\n---\n\n%s", id, g.sentence(10), g.body(o.MinDocBytes))
		files[dir+"rules/naming.md"] = g.doc("Naming in "+id, o)
		for d := 1; d < o.DocsPerCap; d++ {
			name := fmt.Sprintf("docs/doc%03d.md", d)
			if d%3 == 0 {
				name = fmt.Sprintf("docs/guide/doc%03d.md", d)
			}
			files[dir+name] = g.doc(fmt.Sprintf("%s %s %d", g.word(), g.word(), d), o)
		}
	}
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return nil, err
		}
	}
	return ids, nil
}

func quoteList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// gen draws words and assembles docs from them.
type gen struct {
	rng   *rand.Rand
	vocab []string
	zipf  *rand.Zipf // nil: uniform over vocab
}

func (g *gen) word() string {
	if g.zipf == nil {
		return g.vocab[g.rng.IntN(len(g.vocab))]
	}
	return g.vocab[g.zipf.Uint64()]
}

func (g *gen) doc(title string, o Options) string {
	size := o.MinDocBytes + g.rng.IntN(o.MaxDocBytes-o.MinDocBytes+1)
	return "# " + title + "\n\n" + g.body(size)
}

func (g *gen) body(size int) string {
	var b strings.Builder
	for b.Len() < size {
		b.WriteString(g.sentence(8 + g.rng.IntN(10)))
		b.WriteString(" ")
		if g.rng.IntN(6) == 0 {
			b.WriteString("\n\n")
		}
	}
	return b.String() + "\n"
}

func (g *gen) sentence(n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = g.word()
	}
	s := strings.Join(ws, " ")
	return strings.ToUpper(s[:1]) + s[1:] + "."
}

// tail makes n distinct pronounceable pseudo-words of 5 to 10 letters.
func tail(rng *rand.Rand, n int) []string {
	const cons, vows = "bcdfghklmnprstvz", "aeiou"
	seen := map[string]bool{}
	out := make([]string, 0, n)
	for len(out) < n {
		var b strings.Builder
		for range 2 + rng.IntN(3) {
			b.WriteByte(cons[rng.IntN(len(cons))])
			b.WriteByte(vows[rng.IntN(len(vows))])
		}
		if rng.IntN(2) == 0 {
			b.WriteByte(cons[rng.IntN(len(cons))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}
