package changes

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/format/index"

	"github.com/omnidev/omnidev/internal/testrepo"
)

// BenchmarkSnapshot measures the change detection without a tracker, as a
// run with no baseline (the first without Warm, or a fallback) pays it: a
// walk of a generated repository of 1k or 10k tracked files, one file
// edited, and the walk that finds it. internal/execute's BenchmarkRun has
// the figures of whole runs.
//
// Run it with: go test -run '^$' -bench BenchmarkSnapshot -benchtime 20x ./internal/changes/
func BenchmarkSnapshot(b *testing.B) {
	for _, n := range []int{1_000, 10_000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			root := testrepo.Generate(b, n)
			indexes := newIndexReader(nil)
			for b.Loop() {
				s, err := takeSnapshot(b.Context(), root, indexes)
				if err != nil {
					b.Fatal(err)
				}
				f, err := os.OpenFile(filepath.Join(root, testrepo.Path(789)), os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					b.Fatal(err)
				}
				f.WriteString("edit\n")
				f.Close()
				if got, err := s.changes(b.Context()); err != nil || len(got) != 1 {
					b.Fatalf("changes = %+v, %v; want the one edit", got, err)
				}
			}
		})
	}
}

// BenchmarkIndexRead reads a git index of 50k entries three ways: after a
// rewrite that changed three entries' stat data (what `git status` or `git
// checkout -- .` leave behind), whole (a first read, or a rewrite that
// added or removed entries), and with go-git's decoder, which this
// package used before (doc.go has the figures).
//
// Run it with: go test -run '^$' -bench BenchmarkIndexRead -benchtime 20x ./internal/changes/
func BenchmarkIndexRead(b *testing.B) {
	const n = 50_000
	root := testrepo.New(b, map[string]string{"a.txt": "a\n"})
	blob := strings.TrimSpace(testrepo.Git(b, root, "hash-object", "-w", "a.txt"))
	var entries strings.Builder
	for i := range n {
		fmt.Fprintf(&entries, "100644 %s\t%s\n", blob, testrepo.Path(i))
	}
	gitStdin(b, root, entries.String(), "update-index", "--index-info")
	r, err := openRepository(root)
	if err != nil {
		b.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(r.gitDir, "index"))
	if err != nil {
		b.Fatal(err)
	}
	// The same index, rewritten with three entries' mtimes changed.
	rewritten := r
	rewritten.gitDir = b.TempDir()
	f, err := parseIndexFile(bytes.Clone(data))
	if err != nil {
		b.Fatal(err)
	}
	changed := bytes.Clone(data)
	for _, i := range []int{0, 123, 456} {
		changed[f.entries[i].off+entryMtime+3]++
	}
	if err := os.WriteFile(filepath.Join(rewritten.gitDir, "index"), changed, 0o644); err != nil {
		b.Fatal(err)
	}

	b.Run("rewrite", func(b *testing.B) {
		ir := newIndexReader(nil)
		first := ir.read(b.Context(), r)
		if first.len() != n+1 {
			b.Fatalf("%d entries, want %d", first.len(), n+1)
		}
		for i := 0; b.Loop(); i++ {
			next := []repository{rewritten, r}[i%2]
			if x := ir.read(b.Context(), next); !x.sameFiles(first) || x.changed == nil {
				b.Fatal("the rewrite was decoded again")
			}
		}
	})
	b.Run("whole", func(b *testing.B) {
		for b.Loop() {
			if newIndexReader(nil).read(b.Context(), r).len() != n+1 {
				b.Fatal("entries missing")
			}
		}
	})
	b.Run("go-git", func(b *testing.B) {
		for b.Loop() {
			var idx index.Index
			if err := index.NewDecoder(bytes.NewReader(data)).Decode(&idx); err != nil || len(idx.Entries) != n+1 {
				b.Fatal(err)
			}
		}
	})
}
