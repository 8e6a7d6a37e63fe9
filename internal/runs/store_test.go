package runs

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/omnidev/omnidev/internal/changes"
)

// TestPrune: with keep = 2, once keep+pruneSlack runs are passed, two runs
// are left, each with its own pack, and a reopened store agrees.
func TestPrune(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, 2)
	if err != nil {
		t.Fatal(err)
	}
	start := time.UnixMilli(1_700_000_000_000)
	var last []string
	for i := range 2 + pruneSlack + 1 {
		b := newBatch()
		rec := &Record{ID: s.newID(start.Add(time.Duration(i) * time.Second)), Time: start, Program: "x",
			Files: []File{{Path: "a.txt", Status: changes.StatusModified, After: State{Mode: "100644", Blob: b.add(plumbing.BlobObject, []byte{byte(i)}).String()}}}}
		if err := s.save(b, rec); err != nil {
			t.Fatal(err)
		}
		last = append([]string{rec.ID}, last...)
	}
	want := last[:2]
	check := func(s *Store) {
		t.Helper()
		recs, err := s.List(0)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range recs {
			got = append(got, r.ID)
		}
		if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
			t.Errorf("runs = %v, want %v", got, want)
		}
		for _, r := range recs {
			if _, err := s.blob(r.Files[0].After.Blob); err != nil {
				t.Errorf("run %s: %v", r.ID, err)
			}
		}
	}
	check(s)
	packs, _ := filepath.Glob(filepath.Join(dir, ".omni/runs/objects/pack/*.pack"))
	if len(packs) != 2 {
		t.Errorf("%d packs, want 2", len(packs))
	}
	if _, err := s.Get(last[2]); err == nil {
		t.Errorf("pruned run %s still found", last[2])
	}
	s2, err := Open(dir, 2)
	if err != nil {
		t.Fatal(err)
	}
	check(s2)
	if data, _ := os.ReadFile(filepath.Join(dir, ".omni/runs", packsFile)); len(data) == 0 {
		t.Error("the packs list is empty")
	}
}
