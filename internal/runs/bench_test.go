package runs

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/omnidev/omnidev/internal/changes"
)

// benchRepo makes a git repository of n committed files, 50 to a folder.
// Git's automatic gc is off: run in the background, it writes to .git
// while the benchmark's temporary folder is removed.
func benchRepo(b *testing.B, n int) string {
	dir := b.TempDir()
	for i := range n {
		p := filepath.Join(dir, benchFile(i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, fmt.Appendf(nil, "file %d\nsome text\nmore text\n", i), 0o644)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.name=b", "-c", "user.email=b@b", "-c", "gc.auto=0", "-c", "maintenance.auto=false", "commit", "-qm", "init"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

func benchFile(i int) string { return fmt.Sprintf("d%03d/f%05d.txt", i/50, i) }

// BenchmarkRecord measures what keeping a run costs on top of finding its
// changes: Prepare before the run and Record after it, for a run that
// rewrites the 10 dirty files of a repository of 1k or 50k tracked files.
// The cost must follow the dirty files, not the repository.
func BenchmarkRecord(b *testing.B) {
	for _, n := range []int{1_000, 50_000} {
		b.Run(fmt.Sprintf("files=%dk", n/1000), func(b *testing.B) {
			dir := benchRepo(b, n)
			dirty := func(round int) {
				for i := range 10 {
					os.WriteFile(filepath.Join(dir, benchFile(i*37)), fmt.Appendf(nil, "dirty %d %d\n", i, round), 0o644)
				}
			}
			dirty(0)
			rec := changes.NewRecorder(dir, nil)
			defer rec.Close()
			s, err := Open(dir, 0, testKey)
			if err != nil {
				b.Fatal(err)
			}
			var kept time.Duration
			round := 0
			for b.Loop() {
				round++
				m, err := rec.Before(b.Context())
				if err != nil {
					b.Fatal(err)
				}
				t0 := time.Now()
				p := s.Prepare(m)
				kept += time.Since(t0)
				dirty(round)
				found, err := m.Changes(b.Context())
				if err != nil || len(found) != 10 {
					b.Fatalf("changes: %d, %v", len(found), err)
				}
				t1 := time.Now()
				if _, err := s.Record(p, Run{Program: "x"}, found); err != nil {
					b.Fatal(err)
				}
				kept += time.Since(t1)
			}
			b.ReportMetric(float64(kept.Microseconds())/float64(round), "µs-kept/run")
		})
	}
}

// BenchmarkUndo measures undoing a run that changed 1,000 files of 10k
// (500 rewritten, 500 deleted): each round undoes the round before, the
// first the run itself. Its reference, in the same script, is git
// restoring the same 1,000 files (git checkout -- .): what the machine's
// disk makes of writing 1,000 files.
func BenchmarkUndo(b *testing.B) {
	change := func(dir string, round int) {
		for i := range 1000 {
			name := filepath.Join(dir, benchFile(i*10))
			if i%2 == 0 {
				os.WriteFile(name, fmt.Appendf(nil, "changed %d %d\n", i, round), 0o644)
			} else {
				os.Remove(name)
			}
		}
	}
	b.Run("undo", func(b *testing.B) {
		dir := benchRepo(b, 10_000)
		rec := changes.NewRecorder(dir, nil)
		defer rec.Close()
		s, err := Open(dir, 0, testKey)
		if err != nil {
			b.Fatal(err)
		}
		m, err := rec.Before(b.Context())
		if err != nil {
			b.Fatal(err)
		}
		p := s.Prepare(m)
		change(dir, 0)
		found, err := m.Changes(b.Context())
		if err != nil || len(found) != 1000 {
			b.Fatalf("changes: %d, %v", len(found), err)
		}
		if _, err := s.Record(p, Run{Program: "x"}, found); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			res, err := s.Undo(b.Context(), "", false)
			if err != nil || len(res.Restored) != 1000 {
				b.Fatalf("undo: %v, %d restored", err, len(res.Restored))
			}
		}
	})
	b.Run("reference=git-checkout", func(b *testing.B) {
		dir := benchRepo(b, 10_000)
		var took time.Duration
		round := 0
		for b.Loop() {
			round++
			change(dir, round)
			t0 := time.Now()
			if out, err := exec.Command("git", "-C", dir, "checkout", "--", ".").CombinedOutput(); err != nil {
				b.Fatalf("git checkout: %v\n%s", err, out)
			}
			took += time.Since(t0)
		}
		b.ReportMetric(float64(took.Milliseconds())/float64(round), "ms-checkout")
	})
}
