package changes

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// trackerRetry is how long a Recorder walks the worktree after the
// tracker failed (the inotify limits, most often) before trying again.
// The limits are lifted by an administrator or by other programs
// releasing watches, neither within seconds; a try costs one walk.
const trackerRetry = 30 * time.Second

// compactAfter: removed records are left as holes in the baseline until
// there are this many and they are a quarter of it, so that removing a
// file costs O(1) and the holes cost bounded memory.
const compactAfter = 1024

// tracker keeps, between runs, the baseline a run's changes are measured
// against - the snapshot of every file a walk would record - and keeps it
// current from inotify events instead of walking again.
//
// Every folder the walk enters is watched. Events wait in the kernel until
// a run starts; then they are read (see inotify for why reading until the
// queue is empty sees everything so far), and the paths they name are
// recorded again: changes made between runs, by an editor or `git
// checkout`, are part of the baseline and never the run's. After the
// program exits the events are read again; the paths they name are the
// only candidates describe compares, and are then recorded too. The cost
// of a run is the cost of what it changed.
//
// Events cannot always say what changed: the kernel's queue overflowed, or
// a .gitignore, the excludes, a nested repository or the tracked set of an
// ignored folder changed, or the root itself moved. Then a run's report
// comes from a full walk compared with the baseline, exactly as without a
// tracker, and the baseline is rebuilt by a walk before the next run (in
// the background: see Recorder.startBuild).
//
// A tracker is used by its Recorder, whose caller serializes runs, or by
// the one goroutine that builds its baseline in the background, which owns
// it until the build is done: no lock.
type tracker struct {
	root     string
	logger   *slog.Logger
	indexes  *indexReader
	addWatch func(fd int, path string, mask uint32) (int, error)

	in      *inotify // nil: not built
	cleanup runtime.Cleanup
	tree    *tree
	snap    *snapshot
	dirs    map[string]watchedDir // root-relative folder ("" for root) -> its watch
	wds     map[int32]string      // watch -> folder
	copied  atomic.Int64          // bytes of content copies in snap
	holes   int                   // removed records in snap.files
	stale   bool                  // snap must be rebuilt by a walk before the next run
	// broken is why the tracker cannot go on (the watch limit): the
	// Recorder stops tracking for a while.
	broken error
	// walks counts full walks, for tests: steady runs do none.
	walks int
}

// watchedDir is a folder the walk enters, watched.
type watchedDir struct {
	wd int32
	// patterns are the ignore patterns that apply to the folder's entries.
	patterns []gitignore.Pattern
}

// touched is what the events read at once say may have changed.
type touched struct {
	files    map[string]struct{}
	newDirs  []string // folders created or moved in: scanned
	goneDirs []string // folders removed or moved away: whatever was below them
	// indexed are the files that became tracked or untracked.
	indexed []string
	// full says why only a walk can tell what changed; "" if events can.
	full string
}

func newTracker(root string, logger *slog.Logger, addWatch func(fd int, path string, mask uint32) (int, error)) *tracker {
	return &tracker{root: root, logger: logger, indexes: newIndexReader(logger), addWatch: addWatch}
}

// prepare brings the baseline up to date with every change made since the
// last run (by anyone) and returns it: the state just before the run.
func (k *tracker) prepare(ctx context.Context) (*snapshot, error) {
	if k.in == nil || k.stale {
		err := k.build(ctx)
		return k.snap, err
	}
	c, err := k.collect()
	if err != nil {
		return nil, err
	}
	if c.full == "" {
		c.full = k.checkRules()
	}
	if c.full == "" {
		if idx := k.indexes.read(ctx, k.snap.git); idx != k.snap.index {
			c.full = k.indexChanged(idx, c)
		}
	}
	var cands []candidate
	if c.full == "" {
		cands = k.resolve(c)
		c.full = k.checkIndexed(c)
	}
	if k.broken != nil {
		return nil, k.broken
	}
	if c.full != "" {
		k.logger.Debug("rebuilding the worktree baseline", "reason", c.full)
		err := k.build(ctx)
		return k.snap, err
	}
	k.absorb(cands)
	return k.snap, nil
}

// report returns what the run changed since prepare, sorted by path, and
// records it in the baseline.
func (k *tracker) report(ctx context.Context) ([]Change, error) {
	c, err := k.collect()
	if err != nil {
		k.broken = err
		c = &touched{full: "the events could not be read"}
	}
	if c.full == "" {
		c.full = k.checkRules()
	}
	var cands []candidate
	if c.full == "" {
		cands = k.resolve(c)
		if k.broken != nil {
			c.full = "a new folder could not be watched"
		}
	}
	if c.full != "" {
		// The baseline is still the state before the run: compare a walk
		// with it, as a Recorder without a tracker does.
		k.logger.Info("events cannot tell what the run changed; verifying the whole worktree", "reason", c.full)
		k.stale = true
		k.walks++
		return k.snap.changes(ctx)
	}
	report := make([]candidate, 0, len(cands))
	for _, c := range cands {
		if c.before != nil || c.exists {
			report = append(report, c)
		}
	}
	changes := k.snap.describe(ctx, report)
	k.absorb(cands)
	return changes, nil
}

// build watches every folder a walk enters and records every file it finds:
// the baseline from scratch. Each folder is watched before it is read, so a
// change made after the read raises an event.
func (k *tracker) build(ctx context.Context) error {
	k.close()
	in, err := newInotify(k.addWatch)
	if err != nil {
		return err
	}
	// A safety net for a Recorder dropped without Close; close stops it.
	k.in, k.cleanup = in, runtime.AddCleanup(in, closeFD, in.fd)
	start := time.Now()
	r, err := openRepository(k.root)
	if err != nil {
		k.close()
		return err
	}
	s := &snapshot{root: k.root, git: r, index: k.indexes.read(ctx, r)}
	t := &tree{root: k.root, topDir: r.topDir, index: s.index, base: basePatterns(k.root, r)}
	var (
		mu         sync.Mutex
		incomplete bool
	)
	dirs, wds := make(map[string]watchedDir), make(map[int32]string)
	t.enter = func(dir string) error {
		wd, err := in.watch(k.path(dir))
		switch {
		case err == nil:
		case isNotExist(err):
			return nil // gone: the read fails too
		case errors.Is(err, fs.ErrPermission): // EACCES, EPERM
			// Not readable to us (inotify needs read permission, as
			// listing does): left out, as the walk leaves out a folder
			// it cannot read.
			k.logger.Debug("skipping a folder that cannot be watched", "dir", dir, "err", err)
			return errSkipDir
		default:
			return err
		}
		mu.Lock()
		dirs[dir], wds[wd] = watchedDir{wd: wd}, dir
		mu.Unlock()
		return nil
	}
	t.listed = func(dir string, patterns []gitignore.Pattern, ok bool) {
		mu.Lock()
		defer mu.Unlock()
		d, watched := dirs[dir]
		switch {
		case !ok && watched:
			// Unreadable, or a nested repository: not ours to watch.
			delete(dirs, dir)
			delete(wds, d.wd)
			in.unwatch(d.wd)
		case ok && !watched:
			incomplete = true // created between the failed watch and the read
		case ok:
			d.patterns = patterns
			dirs[dir] = d
		}
	}
	found, err := t.walk(ctx)
	t.enter, t.listed = nil, nil
	if err == nil && incomplete {
		err = errors.New("a folder appeared while the worktree was being watched")
	}
	if err != nil {
		k.close()
		if errors.Is(err, errWatchLimit) {
			k.broken = err
		}
		return fmt.Errorf("watch the worktree: %w", err)
	}
	k.copied.Store(0)
	s.fill(found, start, &k.copied)
	k.tree, k.snap, k.dirs, k.wds = t, s, dirs, wds
	k.holes, k.stale, k.broken = 0, false, nil
	k.walks++
	return nil
}

// close stops watching and forgets the baseline.
func (k *tracker) close() {
	if k.in != nil {
		k.cleanup.Stop()
		k.in.close()
	}
	k.in, k.tree, k.snap, k.dirs, k.wds = nil, nil, nil, nil, nil
	k.copied.Store(0)
}

// collect reads the events queued so far.
func (k *tracker) collect() (*touched, error) {
	c := &touched{files: make(map[string]struct{})}
	err := k.in.drain(func(ev inotifyEvent) {
		if ev.mask&inQOverflow != 0 {
			c.full = "the inotify event queue overflowed"
			return
		}
		dir, ok := k.wds[ev.wd]
		if !ok {
			return // a watch dropped since (its folder moved or removed)
		}
		if ev.mask&inIgnored != 0 {
			delete(k.wds, ev.wd)
			if d, ok := k.dirs[dir]; ok && d.wd == ev.wd {
				delete(k.dirs, dir)
			}
			return
		}
		if ev.name == "" {
			if dir == "" && ev.mask&(inDeleteSelf|inMoveSelf) != 0 {
				c.full = "the root folder was moved or removed"
			}
			return // the folder's parent reports the rest
		}
		rel := joinRel(dir, ev.name)
		const entryChanged = inCreate | inDelete | inMovedFrom | inMovedTo
		switch {
		case dir == "" && ev.name == ".omni":
			return
		case ev.name == ".git":
			if ev.mask&entryChanged != 0 {
				c.full = "a repository appeared or went away at " + rel
			}
			return
		case ev.name == ".gitignore":
			c.full = "ignore rules changed in " + rel
			return
		}
		if ev.mask&inIsDir != 0 {
			_, watched := k.dirs[rel]
			switch {
			case ev.mask&(inCreate|inMovedTo) != 0:
				if watched {
					c.goneDirs = append(c.goneDirs, rel) // replaced
				}
				c.newDirs = append(c.newDirs, rel)
			case ev.mask&(inDelete|inMovedFrom) != 0:
				c.goneDirs = append(c.goneDirs, rel)
			case ev.mask&inAttrib != 0 && !watched:
				// Perhaps readable now: a folder that could not be
				// watched or read is scanned when its mode changes.
				c.newDirs = append(c.newDirs, rel)
			}
			return
		}
		c.files[rel] = struct{}{}
	})
	return c, err
}

// checkRules reports whether the ignore rules from outside the worktree's
// .gitignore files (global excludes, info/exclude, .gitignore files above
// root) changed: no event says so, and they are small files.
func (k *tracker) checkRules() string {
	if !reflect.DeepEqual(basePatterns(k.root, k.snap.git), k.tree.base) {
		return "the excludes changed"
	}
	return ""
}

// indexChanged adopts a new git index. Records hold content (a blob hash is
// a statement about content, true whatever the index says later), so only
// files that became tracked or untracked matter: an ignored file is in the
// baseline only while tracked. A rewrite that left the tracked files as
// they were (`git status` refreshing stat data, `git checkout -- .`, `git
// add` of a tracked file) costs nothing here. It returns why a rebuild is
// needed, if it is.
func (k *tracker) indexChanged(idx *gitIndex, c *touched) string {
	prev := k.snap.index
	k.snap.index, k.tree.index = idx, idx
	if prev.sameFiles(idx) {
		return ""
	}
	var old, cur []indexName
	var oldSparse, curSparse []string
	if prev != nil {
		old, oldSparse = prev.names.ents, prev.names.sparse
	}
	if idx != nil {
		cur, curSparse = idx.names.ents, idx.names.sparse
	}
	if !slices.Equal(oldSparse, curSparse) {
		return "the sparse checkout changed"
	}
	for i, j := 0, 0; i < len(old) || j < len(cur); {
		var rel string
		switch {
		case j == len(cur) || i < len(old) && old[i].rel < cur[j].rel:
			rel = old[i].rel
			i++
		case i == len(old) || cur[j].rel < old[i].rel:
			rel = cur[j].rel
			j++
		default:
			i++
			j++
			continue
		}
		c.files[rel] = struct{}{}
		c.indexed = append(c.indexed, rel)
	}
	return ""
}

// checkIndexed returns why a rebuild is needed if a file became tracked or
// untracked where it is ignored: which folders a walk enters depends on
// the tracked files in ignored ones. Run after new folders are scanned.
func (k *tracker) checkIndexed(c *touched) string {
	for _, rel := range c.indexed {
		if strings.HasPrefix(rel, ".omni/") {
			continue // never walked, tracked or not
		}
		dir, name := splitRel(rel)
		d, ok := k.dirs[dir]
		if !ok && isDir(k.path(dir)) || ok && gitignore.NewMatcher(d.patterns).Match(append(k.tree.components(dir), name), false) {
			return "tracked files changed in ignored folders"
		}
	}
	return ""
}

// resolve turns what the events touched into candidates: each path's stat
// data now and its record, if any. Folders that appeared are watched and
// scanned; what was below folders that went away is touched.
func (k *tracker) resolve(c *touched) []candidate {
	if len(c.goneDirs) > 0 {
		gone := make(map[string]bool, len(c.goneDirs))
		for _, d := range c.goneDirs {
			gone[d] = true
		}
		for dir, d := range k.dirs {
			if under(dir, gone) {
				k.in.unwatch(d.wd)
				delete(k.wds, d.wd)
				delete(k.dirs, dir)
			}
		}
		for i := range k.snap.files {
			if rel := k.snap.files[i].rel; rel != "" && under(rel, gone) {
				c.files[rel] = struct{}{}
			}
		}
	}
	for _, d := range c.newDirs {
		if k.visible(d, true) && isDir(k.path(d)) {
			parent, _ := splitRel(d)
			k.scan(d, k.dirs[parent].patterns, c)
		}
	}
	cands := make([]candidate, 0, len(c.files))
	for rel := range c.files {
		cand := candidate{rel: rel}
		if i, ok := k.snap.pos[rel]; ok {
			cand.before = &k.snap.files[i]
		}
		if k.visible(rel, false) {
			cand.after, cand.exists = lstatFile(k.root, rel)
		}
		if cand.before != nil || cand.exists {
			cands = append(cands, cand)
		}
	}
	return cands
}

// scan watches a new folder and everything below it that a walk enters,
// and touches the files found. Each folder is watched before it is read.
func (k *tracker) scan(dir string, patterns []gitignore.Pattern, c *touched) {
	wd, err := k.in.watch(k.path(dir))
	if err != nil {
		if errors.Is(err, errWatchLimit) && k.broken == nil {
			k.broken = err
		}
		return // gone again, or unreadable: the walk skips it too
	}
	files, subdirs, own, ok := k.tree.readDir(dir, patterns)
	if !ok {
		k.in.unwatch(wd)
		return
	}
	if old, ok := k.dirs[dir]; ok && old.wd != wd {
		delete(k.wds, old.wd)
	}
	k.dirs[dir], k.wds[wd] = watchedDir{wd: wd, patterns: own}, dir
	for _, f := range files {
		c.files[f.rel] = struct{}{}
	}
	for _, sd := range subdirs {
		k.scan(sd.rel, sd.patterns, c)
	}
}

// visible reports whether a walk would record rel (a file) or enter it
// (isDir): its folder is walked, and it is neither ignored (tracked files
// never are, nor folders holding them) nor one of the names skipped.
func (k *tracker) visible(rel string, isDir bool) bool {
	dir, name := splitRel(rel)
	d, ok := k.dirs[dir]
	if !ok || name == ".git" || dir == "" && name == ".omni" {
		return false
	}
	ignored := gitignore.NewMatcher(d.patterns).Match(append(k.tree.components(dir), name), isDir)
	if isDir {
		return !ignored || k.tree.index.hasBelow(rel)
	}
	return !ignored || k.tree.index.tracked(rel)
}

// absorb records the candidates as they are now: what the next run's
// changes are measured against.
func (k *tracker) absorb(cands []candidate) {
	racyAfter := time.Now().Add(-racyWindow).UnixNano()
	recs := make([]baseline, len(cands))
	parallel(len(cands), func(i int) {
		c := cands[i]
		if !c.exists {
			return
		}
		b := &recs[i]
		*b = baseline{rel: c.rel, stat: c.after, racy: c.after.mtime >= racyAfter}
		e, tracked := k.snap.index.entry(c.rel)
		if tracked && k.snap.index.matchesIndex(e, c.after) {
			b.kind, b.hash = inIndex, e.hash
		} else if !k.snap.readBaseline(b, e, tracked, &k.copied) {
			b.rel = "" // gone meanwhile
		}
	})
	for i := range recs {
		if recs[i].rel != "" {
			k.put(recs[i])
		} else {
			k.drop(cands[i].rel)
		}
	}
	if k.holes >= compactAfter && k.holes*4 >= len(k.snap.files) {
		k.compact()
	}
}

func (k *tracker) put(b baseline) {
	s := k.snap
	if i, ok := s.pos[b.rel]; ok {
		k.release(&s.files[i])
		s.files[i] = b
		return
	}
	s.pos[b.rel] = len(s.files)
	s.files = append(s.files, b)
}

func (k *tracker) drop(rel string) {
	s := k.snap
	if i, ok := s.pos[rel]; ok {
		k.release(&s.files[i])
		s.files[i] = baseline{}
		delete(s.pos, rel)
		k.holes++
	}
}

func (k *tracker) release(b *baseline) {
	if b.kind == copied {
		k.copied.Add(-int64(len(b.content)))
	}
}

func (k *tracker) compact() {
	s := k.snap
	files := make([]baseline, 0, len(s.pos))
	for _, b := range s.files {
		if b.rel != "" {
			s.pos[b.rel] = len(files)
			files = append(files, b)
		}
	}
	s.files, k.holes = files, 0
}

func (k *tracker) path(rel string) string {
	return filepath.Join(k.root, filepath.FromSlash(rel))
}

// under reports whether rel is one of dirs or lies below one.
func under(rel string, dirs map[string]bool) bool {
	for p := rel; ; {
		if dirs[p] {
			return true
		}
		i := strings.LastIndexByte(p, '/')
		if i < 0 {
			return false
		}
		p = p[:i]
	}
}

// splitRel splits a root-relative path into its folder ("" for root) and
// name.
func splitRel(rel string) (dir, name string) {
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		return rel[:i], rel[i+1:]
	}
	return "", rel
}

func joinRel(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

func isDir(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.IsDir()
}
