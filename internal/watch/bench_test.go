package watch

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkAddTree measures watch setup (New: walk the tree, add a watch per
// directory) on a tree the size DESIGN.md measured, about 300 directories
// and 10,000 files.
func BenchmarkAddTree(b *testing.B) {
	dir := b.TempDir()
	dirs, files := makeTree(b, dir)
	setup := func() *Watcher {
		w, err := New(Options{Roots: []string{dir}}, func(Batch) {})
		if err != nil {
			b.Fatal(err)
		}
		if got := len(w.fsw.WatchList()); got != dirs {
			b.Fatalf("%d directories watched, want %d", got, dirs)
		}
		return w
	}
	// Untimed warm-up: `just bench` runs one iteration, and the first walk
	// right after writing 10,000 files competes with their writeback, which
	// a server starting on an existing repository does not.
	setup().Close()
	for b.Loop() {
		w := setup()
		b.StopTimer() // teardown is not what a starting server waits for
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(dirs), "dirs")
	b.ReportMetric(float64(files), "files")
}

// makeTree fills dir with 6 folders of 7 folders of 6 folders (300
// directories with dir itself) and 33 files in each, plus a node_modules
// folder the Watcher must skip.
func makeTree(b *testing.B, dir string) (dirs, files int) {
	b.Helper()
	var all []string
	for i := range 6 {
		for j := range 7 {
			for k := range 6 {
				all = append(all, filepath.Join(dir, fmt.Sprint("a", i), fmt.Sprint("b", j), fmt.Sprint("c", k)))
			}
		}
	}
	all = append(all, filepath.Join(dir, "node_modules", "pkg"))
	for _, d := range all {
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if filepath.Base(p) == "node_modules" {
			return filepath.SkipDir
		}
		dirs++
		for n := range 33 {
			if err := os.WriteFile(filepath.Join(p, fmt.Sprint("f", n, ".ts")), []byte("export {}\n"), 0o644); err != nil {
				return err
			}
			files++
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return dirs, files
}
