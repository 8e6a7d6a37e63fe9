package runs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/omnidev/omnidev/internal/changes"
)

// worktree reaches the worktree's files through folders opened once each,
// every one checked to be a real folder: never a symlink, and the folder
// it was when it was checked. An undo may run while a program still runs
// (a program may call undo), and such a program could swap a folder for a
// symlink to have undo read or write elsewhere: into .git, whose hooks git
// runs, or to a file the sandbox hides. Each operation then works on an
// open folder, by one name in it.
type worktree struct {
	root *os.Root
	dirs map[string]*os.Root
}

// maxOpenDirs bounds the folders a worktree keeps open: a run may have
// changed files in a hundred thousand folders, and the descriptors of a
// process are not unbounded. Past it, all but the root are closed, and
// opened (and checked) again when needed.
const maxOpenDirs = 256

func openWorktree(root string) (*worktree, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	return &worktree{root: r, dirs: map[string]*os.Root{".": r}}, nil
}

func (w *worktree) Close() {
	for _, d := range w.dirs {
		d.Close()
	}
}

// dir opens the folder name ("a/b", "." the root), creating the missing
// ones when create is set.
func (w *worktree) dir(name string, create bool) (*os.Root, error) {
	if d, ok := w.dirs[name]; ok {
		return d, nil
	}
	parent, err := w.dir(path.Dir(name), create)
	if err != nil {
		return nil, err
	}
	base := path.Base(name)
	fi, err := parent.Lstat(base)
	if errors.Is(err, fs.ErrNotExist) && create {
		if err := parent.Mkdir(base, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		fi, err = parent.Lstat(base)
	}
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a folder now", name)
	}
	d, err := parent.OpenRoot(base)
	if err != nil {
		return nil, err
	}
	if st, err := d.Stat("."); err != nil || !os.SameFile(fi, st) {
		d.Close()
		return nil, fmt.Errorf("%s: %w", name, changes.ErrReplaced)
	}
	if len(w.dirs) >= maxOpenDirs {
		// The caller is done with the folders above: it holds only d.
		w.forget(".")
	}
	w.dirs[name] = d
	return d, nil
}

// lstat returns the folder of rel, its name there, and its stat data.
func (w *worktree) lstat(rel string) (*os.Root, string, os.FileInfo, error) {
	d, err := w.dir(path.Dir(rel), false)
	if err != nil {
		return nil, "", nil, err
	}
	base := path.Base(rel)
	fi, err := d.Lstat(base)
	return d, base, fi, err
}

// state returns the state of the file at rel and its content, read
// within MaxKeptBytes.
func (w *worktree) state(rel string) (State, []byte) {
	d, base, fi, err := w.lstat(rel)
	if err != nil {
		return State{}, nil
	}
	link := fi.Mode()&os.ModeSymlink != 0
	switch {
	case fi.IsDir():
		return State{Mode: modeDir}, nil
	case !link && !fi.Mode().IsRegular():
		return State{Mode: modeDir, NotKept: "not a regular file"}, nil
	}
	st := State{Mode: modeString(modeOf(link, fi.Mode()&0o100 != 0)), Size: fi.Size()}
	if fi.Size() > MaxKeptBytes {
		st.NotKept = fmt.Sprintf("over %d MiB", MaxKeptBytes>>20)
		return st, nil
	}
	data, err := changes.ReadIn(d, base, fi, MaxKeptBytes)
	if err != nil {
		st.NotKept = err.Error()
		return st, nil
	}
	st.Blob, st.Size = changes.BlobHash(data).String(), int64(len(data))
	return st, data
}

// forget closes the folders at name and below, which are being removed;
// "." forgets all but the root.
func (w *worktree) forget(name string) {
	for n, d := range w.dirs {
		if n != "." && (name == "." || n == name || strings.HasPrefix(n, name+"/")) {
			d.Close()
			delete(w.dirs, n)
		}
	}
}
