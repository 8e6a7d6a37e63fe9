package watch

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/fsnotify/fsnotify"
)

// Everything in this file runs on the loop goroutine (or in start, before
// the goroutines exist).

// root is one of Options.Roots.
type root struct {
	path    string
	present bool   // the directory exists and its tree is watched
	anchor  string // while missing: the nearest existing ancestor, watched for the root to appear
}

// handleEvent updates the watches after one fsnotify event and records what
// changed. fsnotify names every event after the watch it came from, so an
// event belongs to a tree exactly when it is a root's own event or its
// parent directory is watched as part of a tree. Everything else comes from
// an anchor (a sibling of the path a missing root waits on) or from a
// directory whose watches were already dropped (events still queued for a
// directory renamed out of the tree): both are ignored.
func (w *Watcher) handleEvent(ev fsnotify.Event) {
	p := filepath.Clean(ev.Name)
	r := w.presentRoot(p)
	if _, inTree := w.dirs[filepath.Dir(p)]; r != nil || inTree {
		w.treeEvent(p, ev.Op, r)
	}
	if w.awaitedBy(p) {
		w.resolveRoots(true)
	}
}

// treeEvent handles an event for p, a path in a tree or (r != nil) a root.
func (w *Watcher) treeEvent(p string, op fsnotify.Op, r *root) {
	_, wasDir := w.dirs[p]
	isDir := wasDir
	if !isDir && op.Has(fsnotify.Create|fsnotify.Chmod) {
		isDir = isRealDir(p)
	}
	if r == nil && w.skipPath(p, isDir) {
		return
	}
	w.note(p)
	switch {
	case op.Has(fsnotify.Remove | fsnotify.Rename):
		// inotify keeps the watches of a renamed directory's subdirectories,
		// still reporting under their old names: drop the whole subtree. A
		// directory renamed within the tree comes back with a Create.
		if wasDir {
			w.dropTree(p)
		}
		if r != nil {
			r.present = false // handleEvent calls resolveRoots next
		}
	case op.Has(fsnotify.Create) && isDir:
		w.addTree(p, true)
	}
}

// addTree watches dir and every directory below it that is not skipped.
// Each directory is watched before it is listed, so an entry created in
// between is either listed or announced by an event. With report, every
// path found is recorded as changed: a new directory's contents were
// probably created before its watch existed (mkdir -p a/b && touch a/b/f).
func (w *Watcher) addTree(dir string, report bool) {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if w.closing() {
			return filepath.SkipAll
		}
		if err != nil {
			// A directory that vanished meanwhile: its parent reports that.
			if !errors.Is(err, fs.ErrNotExist) {
				w.log.Warn("cannot read directory; changes inside it are not seen", "path", p, "err", err)
			}
			return nil
		}
		isDir := d.IsDir()
		if !isDir && !report {
			return nil // spare Skip, possibly an ignore matcher, the bulk of the files
		}
		// dir itself is a root, never skipped, or was checked by its event.
		if p != dir && w.skipPath(p, isDir) {
			if isDir {
				return filepath.SkipDir
			}
			return nil
		}
		if report {
			w.note(p)
		}
		if !isDir {
			return nil
		}
		if err := w.watchDir(p); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return filepath.SkipAll // every further watch fails too; the retry walks again
			}
			if !errors.Is(err, fs.ErrNotExist) {
				w.log.Warn("cannot watch directory; changes inside it are not seen", "path", p, "err", err)
			}
			return filepath.SkipDir
		}
		w.dirs[p] = struct{}{}
		return nil
	})
}

// dropTree forgets dir and every watched directory below it.
func (w *Watcher) dropTree(dir string) {
	for d := range w.dirs {
		if d == dir || isUnder(d, dir) {
			delete(w.dirs, d)
			w.unwatch(d)
		}
	}
}

// rescanAll brings the watches back in line with the disk after events may
// have been lost, or to retry after the watch limit was hit.
func (w *Watcher) rescanAll() {
	w.limitHit = false
	for d := range w.dirs {
		if !isRealDir(d) {
			delete(w.dirs, d)
			w.unwatch(d)
		}
	}
	for _, r := range w.roots {
		if !r.present {
			continue
		}
		if !isRealDir(r.path) {
			r.present = false
			w.dropTree(r.path)
			continue
		}
		// Watching a directory twice is harmless, and this catches the
		// ones created while events were lost.
		w.addTree(r.path, false)
	}
	w.resolveRoots(true)
	switch {
	case w.degraded && !w.limitHit:
		w.degraded = false
		w.log.Info("all directories are watched again")
		// Changes in the directories that were not watched went unseen.
		w.markRescan()
	case w.degraded:
		w.retryTimer.Reset(w.retryDelay)
	}
}

// resolveRoots watches the roots that appeared and, for each root still
// missing, the nearest existing ancestor, from which its creation will be
// seen. Anchors no root waits on any more are dropped.
func (w *Watcher) resolveRoots(report bool) {
	for _, r := range w.roots {
		if r.present {
			continue
		}
		r.anchor = ""
		for {
			fi, err := os.Lstat(r.path)
			if err == nil && fi.IsDir() {
				r.present = true
				w.addTree(r.path, report)
				break
			}
			if err == nil {
				w.log.Warn("watch root is not a directory; waiting for a directory there", "path", r.path, "type", fi.Mode().Type().String())
			}
			dir := existingAncestor(r.path)
			if err := w.watchDir(dir); err == nil {
				w.anchors[dir] = struct{}{}
			} else if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOSPC) {
				w.log.Warn("cannot watch directory; a missing watch root below it will not be seen", "path", dir, "root", r.path, "err", err)
			}
			// A directory created on the way to the root between the check
			// above and the watch sent no event: look again now that the
			// watch is in place.
			next := childToward(dir, r.path)
			if next == r.path && !isRealDir(next) || next != r.path && !followsToDir(next) {
				r.anchor = dir
				break
			}
		}
	}
	for a := range w.anchors {
		if w.awaitedAt(a) {
			continue
		}
		delete(w.anchors, a)
		if _, inTree := w.dirs[a]; !inTree {
			w.unwatch(a)
		}
	}
}

// watchDir starts watching dir, noticing when the inotify watch limit is hit.
func (w *Watcher) watchDir(dir string) error {
	err := w.add(dir)
	if !errors.Is(err, syscall.ENOSPC) {
		return err
	}
	w.limitHit = true
	if !w.degraded {
		w.degraded = true
		w.log.Warn("inotify watch limit reached: some directories are not watched, so every change batch asks for a full rescan until they are",
			"dir", dir, "retry", w.retryDelay, "hint", "raise fs.inotify.max_user_watches (sysctl)")
		w.retryTimer.Reset(w.retryDelay)
		w.markRescan()
	}
	return err
}

func (w *Watcher) unwatch(dir string) {
	// The kernel drops the watch of a deleted directory by itself, so an
	// error here is expected and harmless.
	if err := w.fsw.Remove(dir); err != nil && !errors.Is(err, fsnotify.ErrNonExistentWatch) {
		w.log.Debug("unwatch directory", "path", dir, "err", err)
	}
}

func (w *Watcher) skipPath(path string, isDir bool) bool {
	return defaultSkip(path) || w.skip != nil && w.skip(path, isDir)
}

// defaultSkip reports the paths never worth watching: version control
// internals and dependency trees (huge, and not something to reload on),
// and the folders under .omni the server writes itself, which would
// otherwise trigger a reload after every reload or execution.
func defaultSkip(path string) bool {
	switch filepath.Base(path) {
	case ".git", "node_modules":
		return true
	case "sandbox", "state", "index":
		return filepath.Base(filepath.Dir(path)) == ".omni"
	}
	return false
}

// presentRoot returns the watched root at path p, or nil.
func (w *Watcher) presentRoot(p string) *root {
	for _, r := range w.roots {
		if r.present && r.path == p {
			return r
		}
	}
	return nil
}

// awaitedBy reports whether p is a missing root or lies on the way to one.
func (w *Watcher) awaitedBy(p string) bool {
	for _, r := range w.roots {
		if !r.present && (r.path == p || isUnder(r.path, p)) {
			return true
		}
	}
	return false
}

// awaitedAt reports whether a missing root is anchored at dir.
func (w *Watcher) awaitedAt(dir string) bool {
	for _, r := range w.roots {
		if !r.present && r.anchor == dir {
			return true
		}
	}
	return false
}

// existingAncestor returns the deepest existing directory strictly above
// path. Symbolic links are followed here, as inotify does, so a root below a
// linked folder is still seen when it appears.
func existingAncestor(path string) string {
	for p := filepath.Dir(path); ; p = filepath.Dir(p) {
		if followsToDir(p) || p == filepath.Dir(p) {
			return p
		}
	}
}

// childToward returns the entry of dir on the way to path, which lies below dir.
func childToward(dir, path string) string {
	rest := strings.TrimPrefix(path[len(dir):], string(filepath.Separator))
	first, _, _ := strings.Cut(rest, string(filepath.Separator))
	return filepath.Join(dir, first)
}

// isUnder reports whether p lies strictly below dir; both are clean and absolute.
func isUnder(p, dir string) bool {
	if !strings.HasPrefix(p, dir) || len(p) == len(dir) {
		return false
	}
	return p[len(dir)] == filepath.Separator || strings.HasSuffix(dir, string(filepath.Separator))
}

// isRealDir reports whether p is a directory and not a link to one; trees
// are walked without following links, which could lead outside or loop.
func isRealDir(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.IsDir()
}

func followsToDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
