package runs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/omnidev/omnidev/internal/changes"
)

// ErrChangedSince: files a run changed were changed again after it; undo
// restores nothing unless forced.
var ErrChangedSince = errors.New("files changed since the run")

// UndoResult is what an undo did.
type UndoResult struct {
	// Undone is the run undone.
	Undone string `json:"undone"`
	// Record is the undo's own run record (nil when nothing was restored).
	Record *Record `json:"-"`
	// RunID is the undo's own id: undo it to redo.
	RunID string `json:"run_id,omitempty"`
	// Restored lists the files restored.
	Restored []string `json:"restored"`
	// ChangedSince lists the files changed after the run: restored only
	// with force.
	ChangedSince []string `json:"changed_since,omitempty"`
	// NotKept lists files whose state before the run was not kept (too
	// large), with why: left as they are.
	NotKept []string `json:"not_kept,omitempty"`
}

// Undo restores every file run id changed (the latest run with changes
// when id is "") to its state before that run. A file changed again since
// is not overwritten: without force, Undo restores nothing and returns the
// result listing them with an error wrapping ErrChangedSince. The undo is
// recorded as a run of its own.
func (s *Store) Undo(ctx context.Context, id string, force bool) (*UndoResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.refresh(); err != nil {
		return nil, err
	}
	var rec *Record
	var err error
	if id == "" {
		rec, err = s.latest()
	} else {
		rec, err = s.get(id)
	}
	if err != nil {
		return nil, err
	}
	p, err := s.openPack(s.runs[rec.ID].pack)
	if err != nil {
		return nil, fmt.Errorf("read run %s: %w", rec.ID, err)
	}
	defer p.Close()
	w, err := openWorktree(s.root)
	if err != nil {
		return nil, err
	}
	defer w.Close()
	res := &UndoResult{Undone: rec.ID, Restored: []string{}}
	// todo: the files to restore, each with its state now, which b keeps
	// first (undoing the undo restores it), within MaxRunKeptBytes.
	type file struct {
		File
		now State
	}
	var todo []file
	b := newBatch()
	for _, f := range rec.Files {
		if err := checkPath(f.Path); err != nil {
			return nil, err
		}
		if f.Before.NotKept != "" {
			res.NotKept = append(res.NotKept, f.Path+": "+f.Before.NotKept)
			continue
		}
		now, content := w.state(f.Path)
		if !matches(now, f.After) {
			res.ChangedSince = append(res.ChangedSince, f.Path)
			if !force {
				continue
			}
		}
		keep(b, &now, content)
		todo = append(todo, file{f, now})
	}
	if len(res.ChangedSince) > 0 && !force {
		return res, fmt.Errorf("%w: %s; nothing restored (--force restores them too, losing those changes)", ErrChangedSince, strings.Join(res.ChangedSince, ", "))
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	start := time.Now()
	undo := &Record{ID: s.newID(start), Time: start, Undoes: rec.ID, Program: "// omnidev undo " + rec.ID + "\n"}
	// Removals first, deepest first, so that a folder the run put where a
	// file was is gone before the file comes back.
	slices.SortStableFunc(todo, func(a, b file) int {
		if ra, rb := !a.Before.exists(), !b.Before.exists(); ra != rb {
			if ra {
				return -1
			}
			return 1
		}
		return strings.Count(b.Path, "/") - strings.Count(a.Path, "/")
	})
	var failed []error
	for _, f := range todo {
		u := File{Path: f.Path, Before: f.now, After: f.Before}
		var data []byte
		if f.Before.exists() {
			if data, err = p.blob(f.Before.Blob); err != nil {
				failed = append(failed, fmt.Errorf("restore %s: %w", f.Path, err))
				continue
			}
			keep(b, &u.After, data)
		}
		if err := restore(w, f.Path, f.Before, data); err != nil {
			failed = append(failed, fmt.Errorf("restore %s: %w", f.Path, err))
			continue
		}
		u.Status = status(u.Before, u.After)
		undo.Files = append(undo.Files, u)
		res.Restored = append(res.Restored, f.Path)
	}
	slices.SortFunc(undo.Files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	slices.Sort(res.Restored)
	if len(undo.Files) > 0 {
		if err := s.save(b, undo); err != nil {
			failed = append(failed, fmt.Errorf("record the undo: %w", err))
		} else {
			res.Record, res.RunID = undo, undo.ID
		}
	}
	return res, errors.Join(failed...)
}

func status(before, after State) changes.Status {
	switch {
	case !before.exists():
		return changes.StatusAdded
	case !after.exists():
		return changes.StatusDeleted
	}
	return changes.StatusModified
}

// matches says whether a file in state cur is in state st.
func matches(cur, st State) bool {
	if cur.Mode != st.Mode {
		return false
	}
	if !st.exists() {
		return true
	}
	return st.Blob != "" && cur.Blob == st.Blob
}

// restore puts the file at rel in state st, whose content is data.
func restore(w *worktree, rel string, st State, data []byte) error {
	name := path.Clean(rel)
	if !st.exists() {
		d, base, fi, err := w.lstat(name)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if fi.IsDir() {
			w.forget(name)
			return d.RemoveAll(base)
		}
		if err := d.Remove(base); err != nil {
			return err
		}
		// Folders the run made for the file, now empty, go too.
		for dir := path.Dir(name); dir != "."; dir = path.Dir(dir) {
			parent, err := w.dir(path.Dir(dir), false)
			if err != nil || parent.Remove(path.Base(dir)) != nil {
				break
			}
			w.forget(dir)
		}
		return nil
	}
	d, err := w.dir(path.Dir(name), true)
	if err != nil {
		return err
	}
	base := path.Base(name)
	if fi, err := d.Lstat(base); err == nil && fi.IsDir() {
		w.forget(name)
		if err := d.RemoveAll(base); err != nil {
			return err
		}
	}
	tmp := fmt.Sprintf(".omnidev-undo-%d", time.Now().UnixNano())
	if st.Mode == "120000" {
		if err := d.Symlink(string(data), tmp); err != nil {
			return err
		}
	} else {
		perm := os.FileMode(0o644)
		if st.Mode == "100755" {
			perm = 0o755
		}
		f, err := d.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if err != nil {
			return err
		}
		_, werr := f.Write(data)
		if werr == nil {
			// The umask may have taken bits off: the mode is git's. On
			// the open file, not by name: the name may be a symlink by now.
			werr = f.Chmod(perm)
		}
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			d.Remove(tmp)
			return werr
		}
	}
	if err := d.Rename(tmp, base); err != nil {
		d.Remove(tmp)
		return err
	}
	return nil
}

// capture stores the state of the file at rel in b, its content if it
// fits the run's MaxRunKeptBytes.
func capture(w *worktree, b *batch, rel string) State {
	st, data := w.state(rel)
	keep(b, &st, data)
	return st
}

// keep puts data, the content of a file in state st, in b if it fits the
// run's MaxRunKeptBytes; else st says it is not kept, with its hash.
func keep(b *batch, st *State, data []byte) {
	switch {
	case st.Blob == "" || st.NotKept != "":
	case b.fits(int64(len(data))):
		b.add(plumbing.BlobObject, data)
	default:
		st.NotKept = overRun
	}
}

// checkPath refuses a path a record should never hold: outside the
// worktree, or in .git or .omni.
func checkPath(rel string) error {
	c := path.Clean(rel)
	first, _, _ := strings.Cut(c, "/")
	// Case folded: on macOS and Windows .GIT is .git.
	if c != rel || path.IsAbs(c) || first == ".." || first == "." || strings.EqualFold(first, ".git") || strings.EqualFold(first, ".omni") {
		return fmt.Errorf("refuse to restore %q: not a worktree file", rel)
	}
	return nil
}
