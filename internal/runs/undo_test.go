package runs

import (
	"fmt"
	"os"
	"os/exec"
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
	s, err := Open(root, 0, testKey)
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

// TestRunBudget: a run that makes more content than MaxRunKeptBytes (here
// sparse files, which cost a program no disk) keeps what fits and the
// others' hashes: the server's memory stays bounded, and undo still knows
// the files are unchanged since the run, so it removes them all.
func TestRunBudget(t *testing.T) {
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	rec := changes.NewRecorder(dir, nil)
	defer rec.Close()
	s, err := Open(dir, 0, testKey)
	if err != nil {
		t.Fatal(err)
	}
	m, err := rec.Before(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	p := s.Prepare(m)
	n := MaxRunKeptBytes/MaxKeptBytes + 1
	for i := range n {
		name := filepath.Join(dir, fmt.Sprintf("sparse%02d.bin", i))
		if err := os.WriteFile(name, []byte{byte(i)}, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(name, MaxKeptBytes); err != nil {
			t.Fatal(err)
		}
	}
	found, err := m.Changes(t.Context())
	if err != nil || len(found) != n {
		t.Fatalf("changes: %d, %v", len(found), err)
	}
	r, err := s.Record(p, Run{Program: "x"}, found)
	if err != nil {
		t.Fatal(err)
	}
	kept, hashed := 0, 0
	for _, f := range r.Files {
		switch {
		case f.After.NotKept == "":
			kept++
		case f.After.NotKept == overRun && f.After.Blob != "":
			hashed++
		default:
			t.Errorf("%s: after = %+v", f.Path, f.After)
		}
	}
	if kept > MaxRunKeptBytes/MaxKeptBytes || kept+hashed != n {
		t.Errorf("%d files kept and %d hashed of %d, want at most %d kept", kept, hashed, n, MaxRunKeptBytes/MaxKeptBytes)
	}
	res, err := s.Undo(t.Context(), r.ID, false)
	if err != nil || len(res.Restored) != n {
		t.Fatalf("undo: %v, %+v", err, res)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "sparse*")); len(left) != 0 {
		t.Errorf("undo left %v", left)
	}
}

// TestUndoManyFolders: an undo across more folders than it keeps open
// restores every file.
func TestUndoManyFolders(t *testing.T) {
	root := t.TempDir()
	s, err := Open(root, 0, testKey)
	if err != nil {
		t.Fatal(err)
	}
	b := newBatch()
	rec := &Record{ID: s.newID(time.Now()), Time: time.Now()}
	n := 3*maxOpenDirs + 1
	for i := range n {
		rel := fmt.Sprintf("d%04d/sub/f.txt", i)
		data := fmt.Appendf(nil, "file %d\n", i)
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, rel), data, 0o644); err != nil {
			t.Fatal(err)
		}
		rec.Files = append(rec.Files, File{Path: rel, Status: changes.StatusAdded,
			After: State{Mode: "100644", Blob: b.add(plumbing.BlobObject, data).String(), Size: int64(len(data))}})
	}
	if err := s.save(b, rec); err != nil {
		t.Fatal(err)
	}
	res, err := s.Undo(t.Context(), rec.ID, false)
	if err != nil || len(res.Restored) != n {
		t.Fatalf("undo: %v, %d restored of %d", err, len(res.Restored), n)
	}
	if left, _ := filepath.Glob(filepath.Join(root, "d*")); len(left) != 0 {
		t.Errorf("%d folders left, first %s", len(left), left[0])
	}
	if _, err := s.Undo(t.Context(), res.RunID, false); err != nil {
		t.Fatalf("undo of the undo: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "d0700/sub/f.txt")); string(got) != "file 700\n" {
		t.Errorf("after the undo of the undo: %q", got)
	}
}
