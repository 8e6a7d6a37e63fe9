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

// BenchmarkRecord measures what keeping a run costs on top of finding its
// changes: Prepare before the run and Record after it, for a run that
// rewrites 10 dirty files in a repository of 1k tracked files.
func BenchmarkRecord(b *testing.B) {
	dir := b.TempDir()
	for i := range 1000 {
		p := filepath.Join(dir, fmt.Sprintf("d%02d/f%04d.txt", i%50, i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(fmt.Sprintf("file %d\nsome text\n", i)), 0o644)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "init"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	dirty := func(n int) {
		for i := range 10 {
			os.WriteFile(filepath.Join(dir, fmt.Sprintf("d%02d/f%04d.txt", i%50, i)), []byte(fmt.Sprintf("dirty %d %d\n", i, n)), 0o644)
		}
	}
	dirty(0)
	rec := changes.NewRecorder(dir, nil)
	defer rec.Close()
	s, err := Open(dir, 0)
	if err != nil {
		b.Fatal(err)
	}
	var kept time.Duration
	n := 0
	for b.Loop() {
		n++
		m, err := rec.Before(b.Context())
		if err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		p := s.Prepare(m)
		kept += time.Since(t0)
		dirty(n)
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
	b.ReportMetric(float64(kept.Microseconds())/float64(n), "µs-kept/run")
}
