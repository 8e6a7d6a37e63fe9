// Package captest generates capability folders for tests and benchmarks.
// It writes only below the directory it is given and never reads the
// environment, so tests that share it stay independent.
package captest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
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
}

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
			id, i, sentence(rng, 12))
		files[dir+"index.ts"] = fmt.Sprintf("export function hello%d(): string {\n  return %q;\n}\n", i, id)
		files[dir+"types.d.ts"] = fmt.Sprintf("export function hello%d(): string;\n", i)
		files[dir+"definition.md"] = doc(rng, "Capability "+id, o)
		files[dir+"skills/use/SKILL.md"] = fmt.Sprintf("---\nname: use-%s\ndescription: %s\n---\n\n%s", id, sentence(rng, 10), body(rng, o.MinDocBytes))
		files[dir+"rules/naming.md"] = doc(rng, "Naming in "+id, o)
		for d := 1; d < o.DocsPerCap; d++ {
			name := fmt.Sprintf("docs/doc%03d.md", d)
			if d%3 == 0 {
				name = fmt.Sprintf("docs/guide/doc%03d.md", d)
			}
			files[dir+name] = doc(rng, fmt.Sprintf("%s %s %d", words[rng.IntN(len(words))], words[rng.IntN(len(words))], d), o)
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

func doc(rng *rand.Rand, title string, o Options) string {
	size := o.MinDocBytes + rng.IntN(o.MaxDocBytes-o.MinDocBytes+1)
	return "# " + title + "\n\n" + body(rng, size)
}

func body(rng *rand.Rand, size int) string {
	var b strings.Builder
	for b.Len() < size {
		b.WriteString(sentence(rng, 8+rng.IntN(10)))
		b.WriteString(" ")
		if rng.IntN(6) == 0 {
			b.WriteString("\n\n")
		}
	}
	return b.String() + "\n"
}

func sentence(rng *rand.Rand, n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = words[rng.IntN(len(words))]
	}
	s := strings.Join(ws, " ")
	return strings.ToUpper(s[:1]) + s[1:] + "."
}
