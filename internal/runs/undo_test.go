package runs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/omnidev/omnidev/internal/changes"
)

// TestUndoRefusesSymlinkedFolder: a run changed d/f.txt, then d became a
// symlink to a folder outside the worktree; undo, forced or not, must not
// write through it.
func TestUndoRefusesSymlinkedFolder(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	s, err := Open(root, 0)
	if err != nil {
		t.Fatal(err)
	}
	b := newBatch()
	rec := &Record{ID: s.newID(time.Now()), Time: time.Now(), Files: []File{{
		Path: "d/f.txt", Status: changes.StatusModified,
		Before: State{Mode: "100644", Blob: b.add(plumbing.BlobObject, []byte("old\n")).String(), Size: 4},
		After:  State{Mode: "100644", Blob: b.add(plumbing.BlobObject, []byte("new\n")).String(), Size: 4},
	}}}
	if err := s.save(b, rec); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "f.txt"), []byte("new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "d")); err != nil {
		t.Fatal(err)
	}
	for _, force := range []bool{false, true} {
		res, err := s.Undo(t.Context(), rec.ID, force)
		if err == nil {
			t.Errorf("force=%v: undo through a symlinked folder succeeded: %+v", force, res)
		}
		if force && !strings.Contains(err.Error(), "d is not a folder now") {
			t.Errorf("force: err = %v; want it to say d is not a folder now", err)
		}
		if data, _ := os.ReadFile(filepath.Join(outside, "f.txt")); string(data) != "new\n" {
			t.Fatalf("force=%v: the file outside the worktree became %q", force, data)
		}
	}
}
