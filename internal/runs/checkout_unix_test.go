//go:build unix

package runs

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestStoreFilesReplacedBySymlinks: the user's own store, signed, can have
// files replaced by a checkout (git pull) of a commit that tracks them:
// git overwrites ignored files, and .omni is ignored, so a symlinked
// .omni/runs/packs or .omni/runs/objects/pack lands in a store whose
// owner file is still the user's. Recording a run must not write through
// them, outside the repository.
func TestStoreFilesReplacedBySymlinks(t *testing.T) {
	start := time.UnixMilli(1_700_000_000_000)
	for _, name := range []string{packsFile, "objects/pack", "objects"} {
		t.Run(name, func(t *testing.T) {
			dir, elsewhere := t.TempDir(), t.TempDir()
			s, err := Open(dir, 1, testKey)
			if err != nil {
				t.Fatal(err)
			}
			saveRun(t, s, start, "a\n", "b\n")
			target := filepath.Join(elsewhere, "target")
			if name == packsFile {
				if err := os.WriteFile(target, []byte("the user's .bashrc\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			} else if err := os.Mkdir(target, 0o755); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, ".omni", "runs", filepath.FromSlash(name))
			if err := os.RemoveAll(p); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			for i := 1; i <= 12; i++ { // past keep+pruneSlack: a prune too
				b := newBatch()
				rec := &Record{ID: s.newID(start.Add(time.Duration(i) * time.Second)), Time: start, Program: "x"}
				s.save(b, rec)
			}
			if name == packsFile {
				if data, _ := os.ReadFile(target); string(data) != "the user's .bashrc\n" {
					t.Errorf("the file .omni/runs/packs led to was written: %q", data)
				}
			} else if left, _ := os.ReadDir(target); len(left) != 0 {
				t.Errorf("written in the folder .omni/runs/%s led to: %v", name, left)
			}
		})
	}
}
