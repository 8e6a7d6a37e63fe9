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
	res := &UndoResult{Undone: rec.ID, Restored: []string{}}
	var todo []File
	for _, f := range rec.Files {
		if err := checkPath(f.Path); err != nil {
			return nil, err
		}
		if f.Before.NotKept != "" {
			res.NotKept = append(res.NotKept, f.Path+": "+f.Before.NotKept)
			continue
		}
		if !s.matches(f.Path, f.After) {
			res.ChangedSince = append(res.ChangedSince, f.Path)
			if !force {
				continue
			}
		}
		todo = append(todo, f)
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
	slices.SortStableFunc(todo, func(a, b File) int {
		if ra, rb := !a.Before.exists(), !b.Before.exists(); ra != rb {
			if ra {
				return -1
			}
			return 1
		}
		return strings.Count(b.Path, "/") - strings.Count(a.Path, "/")
	})
	var failed []error
	b := newBatch()
	for _, f := range todo {
		u := File{Path: f.Path, Before: s.capture(b, f.Path), After: f.Before}
		if err := s.restore(f.Path, f.Before); err != nil {
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

// matches says whether the file at rel is in state st.
func (s *Store) matches(rel string, st State) bool {
	cur := s.peek(rel)
	if cur.Mode != st.Mode {
		return false
	}
	if !st.exists() {
		return true
	}
	return st.Blob != "" && cur.Blob == st.Blob
}

// peek is capture without writing to the store.
func (s *Store) peek(rel string) State {
	fi, err := lstatIn(s.root, rel)
	if err != nil {
		return State{}
	}
	if fi.IsDir() || (!fi.Mode().IsRegular() && fi.Mode()&os.ModeSymlink == 0) {
		return State{Mode: modeDir}
	}
	link := fi.Mode()&os.ModeSymlink != 0
	st := State{Mode: modeString(modeOf(link, fi.Mode()&0o100 != 0)), Size: fi.Size()}
	data, err := changes.ReadFile(s.path(rel), link, MaxKeptBytes)
	if err == nil {
		st.Blob = changes.BlobHash(data).String()
	}
	return st
}

// restore puts the file at rel in state st.
func (s *Store) restore(rel string, st State) error {
	root, err := os.OpenRoot(s.root)
	if err != nil {
		return err
	}
	defer root.Close()
	name := path.Clean(rel)
	if !st.exists() {
		if err := realParents(root, name, false); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		fi, err := root.Lstat(name)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if fi.IsDir() {
			return root.RemoveAll(name)
		}
		if err := root.Remove(name); err != nil {
			return err
		}
		// Folders the run made for the file, now empty, go too.
		for dir := path.Dir(name); dir != "."; dir = path.Dir(dir) {
			if root.Remove(dir) != nil {
				break
			}
		}
		return nil
	}
	data, err := s.blob(st.Blob)
	if err != nil {
		return err
	}
	if err := realParents(root, name, true); err != nil {
		return err
	}
	if fi, err := root.Lstat(name); err == nil && fi.IsDir() {
		if err := root.RemoveAll(name); err != nil {
			return err
		}
	}
	tmp := path.Join(path.Dir(name), fmt.Sprintf(".omnidev-undo-%d", time.Now().UnixNano()))
	if st.Mode == "120000" {
		if err := root.Symlink(string(data), tmp); err != nil {
			return err
		}
	} else {
		perm := os.FileMode(0o644)
		if st.Mode == "100755" {
			perm = 0o755
		}
		f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if err != nil {
			return err
		}
		_, werr := f.Write(data)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr == nil {
			// The umask may have taken bits off: the mode is git's.
			werr = root.Chmod(tmp, perm)
		}
		if werr != nil {
			root.Remove(tmp)
			return werr
		}
	}
	if err := root.Rename(tmp, name); err != nil {
		root.Remove(tmp)
		return err
	}
	return nil
}

// realParents checks that every folder above name is a real folder, not a
// symlink (a program may have put one where a folder was, to have undo
// write elsewhere), creating the missing ones when create is set.
func realParents(root *os.Root, name string, create bool) error {
	parts := strings.Split(name, "/")
	for i := 1; i < len(parts); i++ {
		dir := strings.Join(parts[:i], "/")
		fi, err := root.Lstat(dir)
		if errors.Is(err, fs.ErrNotExist) && create {
			if err := root.Mkdir(dir, 0o755); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		if !fi.IsDir() {
			return fmt.Errorf("%s is not a folder now", dir)
		}
	}
	return nil
}

// lstatIn returns the stat data of the file at rel below root, if every
// folder above it is a real folder.
func lstatIn(root, rel string) (os.FileInfo, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	name := path.Clean(rel)
	if err := realParents(r, name, false); err != nil {
		return nil, err
	}
	return r.Lstat(name)
}

// checkPath refuses a path a record should never hold: outside the
// worktree, or in .git or .omni.
func checkPath(rel string) error {
	c := path.Clean(rel)
	first, _, _ := strings.Cut(c, "/")
	if c != rel || path.IsAbs(c) || first == ".." || first == "." || first == ".git" || first == ".omni" {
		return fmt.Errorf("refuse to restore %q: not a worktree file", rel)
	}
	return nil
}
