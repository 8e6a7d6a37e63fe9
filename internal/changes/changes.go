package changes

import (
	"bytes"
	"context"
	"crypto/sha1"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/utils/diff"
	"github.com/sergi/go-diff/diffmatchpatch"
)

// Status says how a run changed a file.
type Status string

const (
	StatusAdded    Status = "added"
	StatusModified Status = "modified"
	StatusDeleted  Status = "deleted"
)

// Change is one file a run changed, measured against the file's content
// just before the run: edits already in the worktree do not count, new
// untracked files do. Insertions and Deletions count lines as
// `git diff --numstat` does.
type Change struct {
	// Path is relative to the repository root, with "/" separators.
	Path       string `json:"path"`
	Status     Status `json:"status"`
	Insertions int    `json:"insertions"`
	Deletions  int    `json:"deletions"`
	// Binary files (a NUL byte in their first 8000 bytes, git's test) get
	// no line counts.
	Binary bool `json:"binary,omitempty"`
	// TooLarge files were too big to copy or diff: no line counts.
	TooLarge bool `json:"too_large,omitempty"`
	// Prior is the file's state before the run, for internal/runs.
	Prior *Prior `json:"-"`
}

// Bounds on the work and memory spent finding what a run changed.
const (
	// maxCopyBytes: files dirty or untracked before a run are copied so
	// their old content can be diffed; larger ones are only hashed (when
	// they must be read anyway) and report changes without line counts.
	maxCopyBytes = 1 << 20
	// maxCopyTotal bounds all copies of one run: a folder full of untracked
	// data must not cost more than this in memory.
	maxCopyTotal = 64 << 20
	// maxDiffBytes: larger files (either side) get no line counts. Line
	// diffs are O(lines x edits); this keeps the worst case in milliseconds.
	maxDiffBytes = 4 << 20
	// maxDiffTotal bounds the bytes diffed for one run; a run that rewrote
	// thousands of files gets statuses for the rest.
	maxDiffTotal = 64 << 20
	// lineDiffTimeout caps one line diff; past it the diff is coarser (a
	// bigger block replaced), so counts can only be higher, never missing.
	lineDiffTimeout = time.Second
	// binarySniffBytes is how much of a file git inspects for NUL.
	binarySniffBytes = 8000
	// racyWindow: a file modified this close to the first walk could be
	// modified again by the run within the same timestamp tick (a second on
	// some filesystems) and keep its size, leaving its stat data equal. Such
	// files are compared by content after the run whatever their stat says.
	// (ctime is not considered: alone it changes with chmod or utimes, not
	// content, and a content change moves mtime too.)
	racyWindow = time.Second
)

// contentKind is what a snapshot knows of a file's content before the run.
type contentKind uint8

const (
	// inIndex: the content is the index entry's blob (hash).
	inIndex contentKind = iota
	// copied: the content is held in memory.
	copied
	// hashed: only the blob hash is known (too large to copy).
	hashed
	// unread: too large to read at all; only stat data is known.
	unread
)

type baseline struct {
	rel     string
	stat    fileStat
	racy    bool
	kind    contentKind
	hash    plumbing.Hash // inIndex, hashed
	content []byte        // copied
}

// snapshot is the worktree as it was just before a run.
//
// Finding what a run changed has two halves. Which paths may have changed
// comes from a second walk compared by stat data (changes) or from the
// tracker's watcher events; what they changed (describe: content
// comparison and line counts against the snapshot) takes candidates from
// either.
type snapshot struct {
	root  string
	git   repository
	index *gitIndex
	files []baseline
	pos   map[string]int // files[pos[rel]].rel == rel
	// blobMu serializes reads from go-git's object storage, which is not
	// documented as safe for concurrent use.
	blobMu sync.Mutex
}

// takeSnapshot records every file below root that a run could report:
// stat data for all of them, and for those that differ from the index (or
// are untracked) their content or its hash, within bounds. indexes (nil:
// a reader of its own) reads the git index.
func takeSnapshot(ctx context.Context, root string, indexes *indexReader) (*snapshot, error) {
	start := time.Now()
	r, err := openRepository(root)
	if err != nil {
		return nil, err
	}
	if indexes == nil {
		indexes = newIndexReader(nil)
	}
	s := &snapshot{root: root, git: r, index: indexes.read(ctx, r)}
	t := &tree{root: root, topDir: r.topDir, index: s.index, base: basePatterns(root, r)}
	found, err := t.walk(ctx)
	if err != nil {
		return nil, err
	}
	var budget atomic.Int64
	s.fill(found, start, &budget)
	return s, nil
}

// fill records the files a walk that began at start found. budget counts
// the bytes of the copies held.
func (s *snapshot) fill(found []walkedFile, start time.Time, budget *atomic.Int64) {
	racyAfter := start.Add(-racyWindow).UnixNano()
	// Room for the files runs will add: growing the slice copies every
	// record (5 MB at 50k files), which the first run to create a file
	// would pay.
	s.files = make([]baseline, len(found), len(found)+len(found)/8+64)
	var toRead []int
	for i, f := range found {
		b := &s.files[i]
		*b = baseline{rel: f.rel, stat: f.stat, racy: f.stat.mtime >= racyAfter}
		if f.tracked && s.index.matchesIndex(f.entry, f.stat) {
			b.kind, b.hash = inIndex, f.entry.hash
			continue
		}
		toRead = append(toRead, i)
	}
	parallel(len(toRead), func(i int) {
		b := &s.files[toRead[i]]
		f := &found[toRead[i]]
		if !s.readBaseline(b, f.entry, f.tracked, budget) {
			b.rel = "" // deleted since the walk, before the run: not the run's doing
		}
	})
	s.files = slices.DeleteFunc(s.files, func(b baseline) bool { return b.rel == "" })
	s.pos = make(map[string]int, len(s.files))
	for i := range s.files {
		s.pos[s.files[i].rel] = i
	}
}

// readBaseline reads a file that is not known to match the index and
// records what the run's changes will be compared against. It returns
// false when the file is gone. e is its index entry, if tracked.
func (s *snapshot) readBaseline(b *baseline, e indexEntry, tracked bool, budget *atomic.Int64) bool {
	st := b.stat
	if st.size > maxCopyBytes {
		if !tracked || e.size != uint32(st.size) || (e.mode == filemode.Symlink) != st.isLink() {
			// Not worth reading: too large to copy, and it differs from
			// any blob we could compare its hash with.
			b.kind = unread
			return true
		}
		h, err := hashFile(s.path(b.rel), st)
		if err != nil {
			return !isNotExist(err)
		}
		b.kind, b.hash = hashed, h
		if h == e.hash {
			b.kind = inIndex
		}
		return true
	}
	data, err := readContent(s.path(b.rel), st)
	if err != nil {
		if isNotExist(err) {
			return false
		}
		b.kind = unread
		return true
	}
	h := blobHash(data)
	if tracked && h == e.hash {
		b.kind, b.hash = inIndex, h
		return true
	}
	if budget.Add(int64(len(data))) > maxCopyTotal {
		budget.Add(-int64(len(data)))
		b.kind, b.hash = hashed, h
		return true
	}
	b.kind, b.content = copied, data
	return true
}

// candidate is a path that may have changed since the snapshot.
type candidate struct {
	rel    string
	before *baseline // nil: not in the snapshot
	after  fileStat
	exists bool // false: gone, or no longer walked (ignored now)
}

// changes walks the worktree again and returns what changed since the
// snapshot, sorted by path.
func (s *snapshot) changes(ctx context.Context) ([]Change, error) {
	// Ignore rules are read again: a run that ignores what it generates
	// (by writing .gitignore) must not have it reported. The index is the
	// one from before: a run's own `git add` does not change what it did.
	t := &tree{root: s.root, topDir: s.git.topDir, index: s.index, base: basePatterns(s.root, s.git)}
	found, err := t.walk(ctx)
	if err != nil {
		return nil, err
	}
	seen := make([]bool, len(s.files))
	var cands []candidate
	for _, f := range found {
		i, ok := s.pos[f.rel]
		if !ok {
			cands = append(cands, candidate{rel: f.rel, after: f.stat, exists: true})
			continue
		}
		seen[i] = true
		if b := &s.files[i]; f.stat != b.stat || b.racy {
			cands = append(cands, candidate{rel: f.rel, before: b, after: f.stat, exists: true})
		}
	}
	for i, ok := range seen {
		// An empty rel is a record the tracker removed (see tracker.drop).
		if !ok && s.files[i].rel != "" {
			cands = append(cands, candidate{rel: s.files[i].rel, before: &s.files[i]})
		}
	}
	return s.describe(ctx, cands), nil
}

// describe compares each candidate with its baseline and returns the real
// changes, sorted by path.
//
// Once ctx is done, the candidates not compared yet are reported without
// reading them: as modified (added or deleted where that is plain), marked
// too_large; their stat data changed, which is all that is known.
func (s *snapshot) describe(ctx context.Context, cands []candidate) []Change {
	slices.SortFunc(cands, func(a, b candidate) int { return strings.Compare(a.rel, b.rel) })
	out := make([]*Change, len(cands))
	var budget atomic.Int64
	parallel(len(cands), func(i int) {
		c := cands[i]
		if !c.exists {
			if _, there := lstatFile(s.root, c.rel); there {
				return // ignored now, not deleted: ignored files are never reported
			}
		}
		if ctx.Err() != nil {
			out[i] = uncompared(c)
			return
		}
		out[i] = s.compare(c, &budget)
	})
	changes := make([]Change, 0, len(out))
	for _, c := range out {
		if c != nil {
			changes = append(changes, *c)
		}
	}
	return changes
}

// uncompared describes a candidate that was not compared.
func uncompared(c candidate) *Change {
	ch := &Change{Path: c.rel, Status: StatusModified, TooLarge: true, Prior: priorOf(c.before)}
	switch {
	case c.before == nil:
		ch.Status = StatusAdded
	case !c.exists:
		ch.Status = StatusDeleted
	}
	return ch
}

// compare describes how one candidate changed, or returns nil if its
// content and git-visible mode are as before.
func (s *snapshot) compare(c candidate, budget *atomic.Int64) *Change {
	ch := &Change{Path: c.rel, Prior: priorOf(c.before)}
	b, a := c.before, c.after
	switch {
	case b == nil:
		ch.Status = StatusAdded
		if budget.Load() > maxDiffTotal {
			ch.TooLarge = true // spare the read: it would not be counted
			break
		}
		cur, ok := s.readAfter(c.rel, a)
		s.count(ch, nil, true, cur, ok, budget)
	case !c.exists:
		ch.Status = StatusDeleted
		if budget.Load() > maxDiffTotal {
			ch.TooLarge = true
			break
		}
		old, ok := s.beforeContent(b)
		s.count(ch, old, ok, nil, true, budget)
	default:
		ch.Status = StatusModified
		if b.kind == unread && a == b.stat {
			return nil // racy, but never read: nothing to compare with
		}
		sameMode := a.isLink() == b.stat.isLink() && a.executable() == b.stat.executable()
		cur, curOK := s.readAfter(c.rel, a)
		switch b.kind {
		case copied:
			if curOK && sameMode && bytes.Equal(cur, b.content) {
				return nil
			}
		case inIndex, hashed:
			if h, err := s.hashAfter(c.rel, a, cur, curOK); err == nil && sameMode && h == b.hash {
				return nil
			}
		}
		var old []byte
		oldOK := false
		if curOK {
			old, oldOK = s.beforeContent(b)
		}
		s.count(ch, old, oldOK, cur, curOK, budget)
	}
	return ch
}

// count fills line counts from the old and new contents; a side that is
// unavailable (too large, unreadable) leaves the change without counts.
func (s *snapshot) count(c *Change, old []byte, oldOK bool, cur []byte, curOK bool, budget *atomic.Int64) {
	if !oldOK || !curOK {
		c.TooLarge = true
		return
	}
	if isBinary(old) || isBinary(cur) {
		c.Binary = true
		return
	}
	if n := int64(len(old) + len(cur)); budget.Add(n) > maxDiffTotal {
		c.TooLarge = true
		return
	}
	switch {
	case len(old) == 0:
		c.Insertions = countLines(string(cur))
	case len(cur) == 0:
		c.Deletions = countLines(string(old))
	default:
		for _, d := range diff.DoWithTimeout(string(old), string(cur), lineDiffTimeout) {
			switch d.Type {
			case diffmatchpatch.DiffInsert:
				c.Insertions += countLines(d.Text)
			case diffmatchpatch.DiffDelete:
				c.Deletions += countLines(d.Text)
			}
		}
	}
}

// readAfter reads a file's current content if it is small enough to diff.
func (s *snapshot) readAfter(rel string, st fileStat) ([]byte, bool) {
	if st.size > maxDiffBytes {
		return nil, false
	}
	data, err := readContent(s.path(rel), st)
	return data, err == nil
}

// hashAfter returns the blob hash of a file's current content, reusing the
// content when it was read.
func (s *snapshot) hashAfter(rel string, st fileStat, data []byte, read bool) (plumbing.Hash, error) {
	if read {
		return blobHash(data), nil
	}
	return hashFile(s.path(rel), st)
}

// beforeContent returns a file's content before the run, if known and
// small enough to diff.
func (s *snapshot) beforeContent(b *baseline) ([]byte, bool) {
	switch b.kind {
	case copied:
		return b.content, true
	case inIndex:
		return s.blob(b.hash)
	}
	return nil, false
}

// blob reads a blob from the repository's object store.
func (s *snapshot) blob(h plumbing.Hash) ([]byte, bool) {
	if s.git.store == nil {
		return nil, false
	}
	s.blobMu.Lock()
	defer s.blobMu.Unlock()
	obj, err := s.git.store.EncodedObject(plumbing.BlobObject, h)
	if err != nil || obj.Size() > maxDiffBytes {
		return nil, false
	}
	r, err := obj.Reader()
	if err != nil {
		return nil, false
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	return data, err == nil
}

func (s *snapshot) path(rel string) string {
	return filepath.Join(s.root, filepath.FromSlash(rel))
}

// readContent returns what git would store for a file: a symlink's target,
// else the file's bytes.
func readContent(path string, st fileStat) ([]byte, error) {
	if st.isLink() {
		target, err := os.Readlink(path)
		return []byte(target), err
	}
	return readRegular(path, max(maxCopyBytes, maxDiffBytes))
}

// hashFile returns the git blob hash of a file without holding it in memory.
func hashFile(path string, st fileStat) (plumbing.Hash, error) {
	if st.isLink() {
		data, err := readContent(path, st)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		return blobHash(data), nil
	}
	f, fi, err := openRegular(path)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	defer f.Close()
	if fi.Size() > maxHashBytes {
		return plumbing.ZeroHash, fmt.Errorf("%s: %w (%d bytes, at most %d hashed)", path, errTooLarge, fi.Size(), maxHashBytes)
	}
	h := newBlobHasher(fi.Size())
	n, err := io.Copy(h, io.LimitReader(f, fi.Size()))
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if n != fi.Size() {
		return plumbing.ZeroHash, fmt.Errorf("%s changed while it was read", path)
	}
	return plumbing.Hash(h.Sum(nil)), nil
}

// blobHash returns the git blob hash of data. It uses crypto/sha1 rather
// than go-git's collision-detecting hasher: these hashes are only compared
// with the index's, never trusted for storage, and are several times
// faster this way.
func blobHash(data []byte) plumbing.Hash {
	h := newBlobHasher(int64(len(data)))
	h.Write(data)
	return plumbing.Hash(h.Sum(nil))
}

func newBlobHasher(size int64) hash.Hash {
	h := sha1.New()
	h.Write([]byte("blob " + strconv.FormatInt(size, 10) + "\x00"))
	return h
}

func isBinary(data []byte) bool {
	return bytes.IndexByte(data[:min(len(data), binarySniffBytes)], 0) >= 0
}

// countLines counts lines as diff tools do: a last line without a newline
// still counts.
func countLines(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && s[len(s)-1] != '\n' {
		n++
	}
	return n
}

// parallel calls f(0..n-1) on a few goroutines: reading, hashing and
// diffing files are independent and mostly I/O or syscalls.
func parallel(n int, f func(i int)) {
	workers := min(n, walkers())
	if workers <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				f(i)
			}
		})
	}
	wg.Wait()
}
