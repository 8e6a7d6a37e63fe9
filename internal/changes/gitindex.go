package changes

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math/bits"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"
)

// repository is the git side of a root: the repository's storage (for
// blobs and config) and where root sits in its worktree. The zero value
// means "not in git".
type repository struct {
	store *filesystem.Storage
	// top is the worktree's top folder, gitDir the folder holding its index.
	top, gitDir string
	// topDir is root's path from the worktree top, as path components.
	topDir []string
}

// openRepository finds the repository whose worktree holds root as git
// does: the nearest .git folder, or .git file naming one, at or above
// root. It opens go-git's storage rather than a go-git Repository, which
// refuses repositories with extensions it does not know - such as
// extensions.worktreeConfig, which `git sparse-checkout` sets - although
// blobs and config read the same. A folder outside git is not an error:
// every file is then untracked; so is a repository whose objects are not
// named by SHA-1 (extensions.objectFormat), whose index and blobs this
// package cannot match, which leaves every file compared with a copy.
func openRepository(root string) (repository, error) {
	top, gitDir, err := findGitDir(root)
	if err != nil || gitDir == "" {
		return repository{}, err
	}
	dot := osfs.New(gitDir)
	var fsys billy.Filesystem = dot
	// A linked worktree's git folder names the main one, which holds the
	// objects, config and info/.
	if data, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		common := strings.TrimSpace(string(data))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitDir, common)
		}
		fsys = dotgit.NewRepositoryFilesystem(dot, osfs.New(common))
	}
	store := filesystem.NewStorage(fsys, cache.NewObjectLRUDefault())
	if cfg, err := store.Config(); err == nil {
		if f := cfg.Raw.Section("extensions").Option("objectformat"); f != "" && !strings.EqualFold(f, "sha1") {
			return repository{}, nil
		}
	}
	rel, err := filepath.Rel(top, root)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return repository{}, nil
	}
	r := repository{store: store, top: top, gitDir: gitDir}
	if rel != "." {
		r.topDir = strings.Split(filepath.ToSlash(rel), "/")
	}
	return r, nil
}

// findGitDir returns the worktree top holding root and its git folder, or
// "" when root is not in a worktree.
func findGitDir(root string) (top, gitDir string, err error) {
	for dir := root; ; {
		dotGit := filepath.Join(dir, ".git")
		fi, err := os.Stat(dotGit)
		switch {
		case err == nil && fi.IsDir():
			return dir, dotGit, nil
		case err == nil:
			// A linked worktree or submodule: "gitdir: <path>".
			data, err := os.ReadFile(dotGit)
			if err != nil {
				return "", "", fmt.Errorf("read %s: %w", dotGit, err)
			}
			line, _, _ := strings.Cut(string(data), "\n")
			path, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir: ")
			if !ok {
				return "", "", fmt.Errorf("read %s: no gitdir line; is it a git worktree?", dotGit)
			}
			if !filepath.IsAbs(path) {
				path = filepath.Join(dir, path)
			}
			if !isDir(path) {
				return "", "", nil // its repository is gone
			}
			return dir, path, nil
		case !errors.Is(err, fs.ErrNotExist):
			return "", "", fmt.Errorf("find the git repository: %w", err)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", "", nil
		}
		dir = parent
	}
}

// prefix is root's path from the worktree top as index entries name it:
// "" or "a/b/".
func (r repository) prefix() string {
	if len(r.topDir) == 0 {
		return ""
	}
	return strings.Join(r.topDir, "/") + "/"
}

// gitIndex is what a snapshot needs of the git index: the stage-0 entries
// of files and symlinks below root, in name order. Its methods accept a
// nil receiver (no repository).
//
// An entry's stat data, mode and hash are decoded from fixed when asked
// for, not up front: an index rewritten by `git status` or `git checkout`
// usually differs from the last one only in those fields of a few
// entries, and then the new gitIndex keeps the old names, offsets and
// fixed fields, and holds the few entries that differ in changed.
type gitIndex struct {
	// file is the index file's stat data when it was read: the key under
	// which an indexReader reuses it.
	file    fileStat
	modTime int64 // the index file's mtime, for the racy-clean test
	names   *indexNames
	// fixed holds each entry's fixed-size fields at the entry's offset:
	// an index file itself when plain, else a copy of each entry's fields.
	// It is never written once a gitIndex holds it.
	fixed []byte
	plain bool
	// changed holds the fixed fields of the entries that differ from
	// fixed, by offset.
	changed map[uint32][]byte
}

// indexNames is what a rewrite of the index that changes only entries'
// stat data, modes or hashes leaves as it was. Shared by the gitIndex
// values read before and after such a rewrite: same pointer, same tracked
// files.
type indexNames struct {
	ents []indexName // sorted by rel
	// sparse are the sparse-directory entries of a sparse index below root
	// (without the trailing slash), sorted: folders whose files are all
	// tracked and not checked out.
	sparse []string
	// all is the offset of every entry of a plain index file (those left
	// out of ents too), end the offset after the last: the layout a
	// rewrite is compared with.
	all []uint32
	end int
}

type indexName struct {
	rel string
	off uint32
}

// indexEntry is the part of an index entry a snapshot uses.
type indexEntry struct {
	hash  plumbing.Hash
	mode  filemode.FileMode
	size  uint32
	mtime int64 // nanoseconds; 0 when the entry has no stat data
	ino   uint32
}

// Offsets in an index entry: stat data (ctime, mtime, dev, ino, mode,
// uid, gid, size: 32-bit big-endian each, times as seconds and
// nanoseconds), the object hash, then 16 bits of flags and the name.
const (
	entryMtime  = 8
	entryIno    = 20
	entryMode   = 24
	entrySize   = 36
	entryHash   = 40
	entryFlags  = 60
	entryFixed  = 60 // the fields a rewrite may change in place
	entryHeader = 62 // fixed fields and flags
	indexHeader = 12 // "DIRC", version, entry count
)

func (x *gitIndex) len() int {
	if x == nil {
		return 0
	}
	return len(x.names.ents)
}

func (x *gitIndex) find(rel string) (int, bool) {
	if x == nil {
		return 0, false
	}
	return slices.BinarySearchFunc(x.names.ents, rel, func(e indexName, rel string) int { return strings.Compare(e.rel, rel) })
}

// tracked reports whether rel has an entry.
func (x *gitIndex) tracked(rel string) bool {
	_, ok := x.find(rel)
	return ok
}

// entry returns rel's entry, if it has one.
func (x *gitIndex) entry(rel string) (indexEntry, bool) {
	i, ok := x.find(rel)
	if !ok {
		return indexEntry{}, false
	}
	off := x.names.ents[i].off
	b := x.fixed[off:]
	if c, ok := x.changed[off]; ok {
		b = c
	}
	e := indexEntry{
		mode:  filemode.FileMode(binary.BigEndian.Uint32(b[entryMode:])),
		size:  binary.BigEndian.Uint32(b[entrySize:]),
		mtime: int64(binary.BigEndian.Uint32(b[entryMtime:]))*1e9 + int64(binary.BigEndian.Uint32(b[entryMtime+4:])),
		ino:   binary.BigEndian.Uint32(b[entryIno:]),
	}
	copy(e.hash[:], b[entryHash:entryHash+len(e.hash)])
	return e, true
}

// hasBelow reports whether a file inside dir is tracked, in which case an
// ignored dir must still be walked.
func (x *gitIndex) hasBelow(dir string) bool {
	if x == nil {
		return false
	}
	prefix := dir + "/"
	ents := x.names.ents
	i, _ := slices.BinarySearchFunc(ents, prefix, func(e indexName, p string) int { return strings.Compare(e.rel, p) })
	if i < len(ents) && strings.HasPrefix(ents[i].rel, prefix) {
		return true
	}
	sparse := x.names.sparse
	if len(sparse) == 0 {
		return false
	}
	// A sparse folder at dir, below it or above it.
	if i, found := slices.BinarySearch(sparse, dir); found || i < len(sparse) && strings.HasPrefix(sparse[i], prefix) {
		return true
	}
	for p := dir; ; {
		j := strings.LastIndexByte(p, '/')
		if j < 0 {
			return false
		}
		p = p[:j]
		if _, found := slices.BinarySearch(sparse, p); found {
			return true
		}
	}
}

// sameFiles reports whether y tracks the same files as x.
func (x *gitIndex) sameFiles(y *gitIndex) bool {
	if x == nil || y == nil {
		return x == y
	}
	return x.names == y.names
}

// matchesIndex reports whether a file's stat data says it still has its
// index entry's content, as git decides without reading it: same type,
// size and mtime (and inode when recorded). A file modified no earlier
// than the index was written is "racily clean" - it may have changed
// within the same timestamp tick after being hashed - and must be read.
func (x *gitIndex) matchesIndex(e indexEntry, st fileStat) bool {
	return (e.mode == filemode.Symlink) == st.isLink() &&
		e.size == uint32(st.size) &&
		e.mtime != 0 && e.mtime == st.mtime &&
		(e.ino == 0 || e.ino == uint32(st.ino)) &&
		st.mtime < x.modTime
}

// indexReader reads a repository's git index for one Recorder and keeps
// what it read while the index file is unchanged. It decodes the index
// itself rather than through go-git, whose decoder reads field by field,
// hashes the whole file and refuses split and sparse indexes, a cost paid
// on every run after git rewrote the index (doc.go has the figures). A
// rewrite that changes only entries' stat data, modes or hashes
// (what `git status`, `git checkout -- .` or `git add` of a tracked file
// do) is found by comparing the new file with the last one, at memory
// speed, and costs no decoding.
//
// An index it cannot decode is listed by `git ls-files --stage -z`
// instead, once per index file, said once in the log.
//
// Not safe for concurrent use: its Recorder's caller serializes the calls.
type indexReader struct {
	logger *slog.Logger
	last   *gitIndex
	// shared is the last shared index of a split index read, by name:
	// git never rewrites a shared index file, it writes a new one.
	shared     *indexFile
	sharedName string
	listed     bool     // the first use of git ls-files was logged
	failed     fileStat // the last index file that could not be read: warned once
}

func newIndexReader(logger *slog.Logger) *indexReader {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &indexReader{logger: logger}
}

// read returns the repository's index, the same *gitIndex while the index
// file is unchanged. It returns nil outside git, and when the index cannot
// be read (logged: every file is then compared against copies, slower but
// still right).
func (ir *indexReader) read(ctx context.Context, r repository) *gitIndex {
	if r.store == nil {
		return nil
	}
	data, key, release, err := ir.mapFile(filepath.Join(r.gitDir, "index"))
	defer release()
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// No index yet (nothing was ever added): nothing is tracked.
		if ir.last == nil || ir.last.file != (fileStat{}) {
			ir.last = &gitIndex{names: &indexNames{}}
		}
		return ir.last
	case err != nil:
		ir.warn(key, err)
		return nil
	case key == ir.failed:
		return nil // warned about already; unchanged since
	case data == nil:
		return ir.last
	}
	x, err := ir.decodeMapped(r, data, key)
	if err != nil {
		cause := err
		if x, err = ir.list(ctx, r, key); err != nil {
			ir.warn(key, errors.Join(cause, err))
			return nil
		}
		if !ir.listed {
			ir.listed = true
			ir.logger.Info("reading the git index through git ls-files: this index format is not decoded here", "err", cause)
		}
	}
	ir.last = x
	return x
}

func (ir *indexReader) warn(key fileStat, err error) {
	if key != (fileStat{}) && key == ir.failed {
		return
	}
	ir.failed = key
	ir.logger.Warn("cannot read the git index; comparing every file with a copy instead", "err", err)
}

// mapFile maps the index file into memory and returns it with its stat
// data, or nil data when it is the file last read or the one that could
// not be; release unmaps it. The stat data comes from the open file, so
// that it describes the content mapped even if git replaces the file
// meanwhile (git writes a new file and renames it over the old one, which
// stays whole while mapped). Mapping rather than reading saves copying the
// whole file (4 MB at 50k entries) to compare it with the last one.
func (ir *indexReader) mapFile(path string) (data []byte, key fileStat, release func(), err error) {
	release = func() {}
	f, _, err := openRegular(path)
	if err != nil {
		return nil, fileStat{}, release, err
	}
	defer f.Close()
	if key, err = statOpen(f); err != nil {
		return nil, fileStat{}, release, fmt.Errorf("stat %s: %w", path, err)
	}
	if ir.last != nil && ir.last.file == key || key == ir.failed {
		return nil, key, release, nil
	}
	if key.size == 0 {
		return []byte{}, key, release, nil // not an index: decoding says so
	}
	data, unmap, err := mapOpen(f, key.size)
	if err != nil {
		return nil, key, release, fmt.Errorf("map %s: %w", path, err)
	}
	return data, key, unmap, nil
}

// decodeMapped decodes a mapped index file. A program that truncated the
// file in place, as git never does, would make reading it fault (SIGBUS):
// that is an error here, not a crash.
func (ir *indexReader) decodeMapped(r repository, data []byte, key fileStat) (x *gitIndex, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			if _, fault := p.(interface{ Addr() uintptr }); !fault {
				panic(p)
			}
			x, err = nil, fmt.Errorf("read the git index: the file was cut short while read: %v", p)
		}
	}()
	return ir.decode(r, data, key)
}

// maxChanged is how many entries may differ from an earlier index's
// fixed fields before a rewrite is held whole rather than as changes.
const maxChanged = 4096

// decode turns an index file into a gitIndex: from the last one when only
// entries' fixed fields changed, else by parsing it (and its shared index
// when split). Whatever is kept of data, which is mapped, is copied.
func (ir *indexReader) decode(r repository, data []byte, key fileStat) (*gitIndex, error) {
	if last := ir.last; last != nil && last.plain {
		if changed, ok := changedEntries(last.fixed, data, last.names); ok {
			x := &gitIndex{file: key, modTime: key.mtime, names: last.names, fixed: last.fixed, plain: true, changed: changed}
			if len(changed) > maxChanged {
				x.fixed, x.changed = bytes.Clone(data), nil
			}
			return x, nil
		}
	}
	f, err := parseIndexFile(data)
	if err != nil {
		return nil, err
	}
	if f.link == nil {
		return newGitIndex(key, bytes.Clone(data), f.entries, f, r.prefix()), nil
	}
	var base *indexFile
	if f.link.shared != plumbing.ZeroHash {
		if base, err = ir.sharedIndex(r, f.link.shared); err != nil {
			return nil, err
		}
	}
	ents, fixed, err := mergeSplit(base, f)
	if err != nil {
		return nil, err
	}
	return newGitIndex(key, fixed, ents, nil, r.prefix()), nil
}

// sharedIndex returns the shared part of a split index.
func (ir *indexReader) sharedIndex(r repository, id plumbing.Hash) (*indexFile, error) {
	name := "sharedindex." + id.String()
	if ir.sharedName == name {
		return ir.shared, nil
	}
	data, err := os.ReadFile(filepath.Join(r.gitDir, name))
	if err != nil {
		return nil, fmt.Errorf("read the shared index of a split index: %w", err)
	}
	f, err := parseIndexFile(data)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if f.link != nil {
		return nil, fmt.Errorf("read %s: a shared index that is itself split", name)
	}
	ir.shared, ir.sharedName = f, name
	return f, nil
}

// newGitIndex keeps the stage-0 entries below prefix of an index whose
// entries' fixed fields are in data. plain, if set, is the parsed file
// that data is, for comparing the next rewrite with.
func newGitIndex(key fileStat, data []byte, entries []rawEntry, plain *indexFile, prefix string) *gitIndex {
	n := &indexNames{ents: make([]indexName, 0, len(entries))}
	if plain != nil {
		n.all, n.end = make([]uint32, len(entries)), plain.end
	}
	for i, e := range entries {
		if plain != nil {
			n.all[i] = e.off
		}
		// Stage 0 is a merged entry; conflicted paths (stages 1-3) have
		// no single "before" blob and count as untracked. Submodules are
		// folders the walk does not enter.
		if e.stage() != 0 || !strings.HasPrefix(e.name, prefix) || len(e.name) == len(prefix) {
			continue
		}
		rel := e.name[len(prefix):]
		switch filemode.FileMode(e.mode) {
		case filemode.Submodule:
		case filemode.Dir:
			n.sparse = append(n.sparse, strings.TrimSuffix(rel, "/"))
		default:
			n.ents = append(n.ents, indexName{rel: rel, off: e.off})
		}
	}
	// Index entries are sorted by name; a file that is not would only make
	// lookups miss.
	if !slices.IsSortedFunc(n.ents, compareNames) {
		slices.SortFunc(n.ents, compareNames)
	}
	slices.Sort(n.sparse)
	return &gitIndex{file: key, modTime: key.mtime, names: n, fixed: data, plain: plain != nil}
}

func compareNames(a, b indexName) int { return strings.Compare(a.rel, b.rel) }

// changedEntries reports whether the index file cur holds the same
// entries as prev (whose layout is n) at the same offsets, differing at
// most in their fixed fields: stat data, hash, and a mode of the same
// kind. If so, it returns a copy of the fixed fields of those that differ,
// by offset.
func changedEntries(prev, cur []byte, n *indexNames) (map[uint32][]byte, bool) {
	if n.end == 0 || len(cur) < n.end || !bytes.Equal(prev[:indexHeader], cur[:indexHeader]) {
		return nil, false
	}
	changed := make(map[uint32][]byte)
	for p := indexHeader; p < n.end; {
		q := mismatch(prev[p:n.end], cur[p:n.end])
		if q < 0 {
			break
		}
		p += q
		k, found := slices.BinarySearch(n.all, uint32(p))
		if !found {
			k--
		}
		if k < 0 {
			return nil, false
		}
		start := int(n.all[k])
		if p-start >= entryFixed || modeKind(prev[start+entryMode:]) != modeKind(cur[start+entryMode:]) {
			return nil, false
		}
		changed[uint32(start)] = bytes.Clone(cur[start : start+entryFixed])
		p = start + entryFixed
	}
	// The extensions may differ (the cache tree), as long as cur does not
	// now need a shared index.
	exts, err := parseExtensions(cur, n.end)
	return changed, err == nil && exts.link == nil
}

// modeKind sorts an entry's mode into what newGitIndex keeps apart.
func modeKind(b []byte) filemode.FileMode {
	switch m := filemode.FileMode(binary.BigEndian.Uint32(b)); m {
	case filemode.Dir, filemode.Submodule:
		return m
	}
	return filemode.Regular
}

// mismatch returns the index of the first byte where a and b (of a's
// length at least) differ, or -1. Comparing blocks with bytes.Equal, big
// ones then small ones, keeps it at memory speed.
func mismatch(a, b []byte) int {
	const big, small = 16 << 10, 256
	i := 0
	for i+big <= len(a) && bytes.Equal(a[i:i+big], b[i:i+big]) {
		i += big
	}
	for i+small <= len(a) && bytes.Equal(a[i:i+small], b[i:i+small]) {
		i += small
	}
	for ; i < len(a); i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

// indexFile is a parsed index file (format: git's
// Documentation/gitformat-index.txt, versions 2 to 4).
type indexFile struct {
	data    []byte
	entries []rawEntry
	end     int // offset after the last entry
	link    *splitLink
}

// rawEntry is one entry of an index file; its fixed fields are at off.
type rawEntry struct {
	name  string
	off   uint32
	flags uint16
	mode  uint32
}

func (e rawEntry) stage() int { return int(e.flags>>12) & 3 }

// splitLink is the "link" extension of a split index: the shared index
// holding most entries, which of them this file deletes and which it
// replaces (positions in the shared index).
type splitLink struct {
	shared            plumbing.Hash
	deleted, replaced []int
}

// parseIndexFile parses the entries and extensions of an index file. It
// does not check the trailing checksum: git writes the index to a lock
// file and renames it, so a file is never seen half written.
func parseIndexFile(data []byte) (*indexFile, error) {
	if len(data) < indexHeader+len(plumbing.ZeroHash) || string(data[:4]) != "DIRC" {
		return nil, errors.New("not a git index file")
	}
	version := binary.BigEndian.Uint32(data[4:])
	if version < 2 || version > 4 {
		return nil, fmt.Errorf("index version %d", version)
	}
	count := int(binary.BigEndian.Uint32(data[8:]))
	limit := len(data) - len(plumbing.ZeroHash)
	if count > (limit-indexHeader)/entryHeader {
		return nil, fmt.Errorf("index claims %d entries in %d bytes", count, len(data))
	}
	raw := make([]rawEntry, count)
	// Names are gathered in one buffer and made strings at once: one
	// allocation rather than one per entry.
	names := make([]byte, 0, limit-indexHeader-count*entryHeader)
	ends := make([]int, count)
	prev := 0 // start of the previous name in names (version 4)
	p := indexHeader
	for i := range raw {
		start := p
		if p+entryHeader > limit {
			return nil, errors.New("index entries run past the end of the file")
		}
		flags := binary.BigEndian.Uint16(data[p+entryFlags:])
		raw[i] = rawEntry{off: uint32(start), flags: flags, mode: binary.BigEndian.Uint32(data[p+entryMode:])}
		p += entryHeader
		if flags&0x4000 != 0 { // extended flags follow
			if version < 3 {
				return nil, errors.New("extended flags in a version 2 index")
			}
			p += 2
		}
		nameStart := len(names)
		if version == 4 {
			// The name is the previous one minus its last strip bytes,
			// plus what follows, up to a NUL.
			strip, n := gitVarint(data[p:limit])
			if n == 0 || strip > uint64(nameStart-prev) {
				return nil, errors.New("bad name compression in a version 4 index")
			}
			p += n
			names = append(names, names[prev:nameStart-int(strip)]...)
			prev = nameStart
		}
		nul := bytes.IndexByte(data[p:limit], 0)
		if nul < 0 {
			return nil, errors.New("index entry name runs past the end of the file")
		}
		names = append(names, data[p:p+nul]...)
		ends[i] = len(names)
		p += nul + 1
		if version < 4 {
			// Entries are padded with NULs to a multiple of 8 bytes.
			p = start + (p-1-start+8)&^7
			if p > limit {
				return nil, errors.New("index entries run past the end of the file")
			}
		}
	}
	all := string(names)
	begin := 0
	for i := range raw {
		raw[i].name = all[begin:ends[i]]
		begin = ends[i]
	}
	f, err := parseExtensions(data, p)
	if err != nil {
		return nil, err
	}
	f.data, f.entries, f.end = data, raw, p
	return f, nil
}

// parseExtensions reads the extensions that follow the entries at p.
// Optional ones (upper-case signature) are skipped; of the required ones,
// "link" (split index) and "sdir" (sparse index: directory entries) are
// understood.
func parseExtensions(data []byte, p int) (*indexFile, error) {
	f := &indexFile{}
	limit := len(data) - len(plumbing.ZeroHash)
	for p+8 <= limit {
		sig := string(data[p : p+4])
		size := int(binary.BigEndian.Uint32(data[p+4:]))
		p += 8
		if size > limit-p {
			return nil, fmt.Errorf("index extension %q runs past the end of the file", sig)
		}
		body := data[p : p+size]
		p += size
		switch {
		case sig == "link":
			l, err := parseLink(body)
			if err != nil {
				return nil, err
			}
			f.link = l
		case sig == "sdir":
		case sig[0] >= 'A' && sig[0] <= 'Z':
		default:
			return nil, fmt.Errorf("index extension %q", sig)
		}
	}
	if p != limit {
		return nil, errors.New("bad index extensions")
	}
	return f, nil
}

func parseLink(b []byte) (*splitLink, error) {
	l := &splitLink{}
	if len(b) < len(l.shared) {
		return nil, errors.New("short split index link")
	}
	copy(l.shared[:], b)
	b = b[len(l.shared):]
	if len(b) == 0 {
		return l, nil
	}
	var err error
	if l.deleted, b, err = readEWAH(b); err != nil {
		return nil, err
	}
	if l.replaced, _, err = readEWAH(b); err != nil {
		return nil, err
	}
	return l, nil
}

// readEWAH decodes one of git's EWAH-compressed bitmaps (ewah/ewah_io.c):
// the bit count, the word count, the 64-bit words, the position of the
// last marker word. Each marker word holds a bit, how many words of that
// bit follow (31 bits) and how many literal words come after them (32
// bits). It returns the set bits' positions and what follows the bitmap.
func readEWAH(b []byte) ([]int, []byte, error) {
	if len(b) < 12 {
		return nil, nil, errors.New("short bitmap in a split index")
	}
	size := int(binary.BigEndian.Uint32(b))
	words := int(binary.BigEndian.Uint32(b[4:]))
	if words > (len(b)-12)/8 {
		return nil, nil, errors.New("short bitmap in a split index")
	}
	w := b[8 : 8+8*words]
	var set []int
	pos := 0
	for i := 0; i < words; {
		marker := binary.BigEndian.Uint64(w[8*i:])
		i++
		run, literals := int(marker>>1&0xffffffff), int(marker>>33)
		if pos+64*run > size+64 || literals > words-i {
			return nil, nil, errors.New("bad bitmap in a split index")
		}
		if marker&1 != 0 {
			for k := range 64 * run {
				set = append(set, pos+k)
			}
		}
		pos += 64 * run
		for range literals {
			for v := binary.BigEndian.Uint64(w[8*i:]); v != 0; v &= v - 1 {
				set = append(set, pos+bits.TrailingZeros64(v))
			}
			i++
			pos += 64
		}
	}
	set = slices.DeleteFunc(set, func(k int) bool { return k >= size })
	return set, b[12+8*words:], nil
}

// gitVarint decodes git's variable-length integer (varint.c), returning
// it and the bytes used (0 if malformed).
func gitVarint(b []byte) (uint64, int) {
	if len(b) == 0 {
		return 0, 0
	}
	c := b[0]
	v := uint64(c & 127)
	n := 1
	for c&128 != 0 {
		if n == len(b) || v >= 1<<56 {
			return 0, 0
		}
		v++
		c = b[n]
		n++
		v = v<<7 + uint64(c&127)
	}
	return v, n
}

// mergeSplit applies a split index's own entries to its shared index, as
// git does (split-index.c): entries marked deleted go, those marked
// replaced take the fields of this file's first entries (which have no
// names), and this file's other entries are added in order. It returns the
// entries and a buffer holding their fixed fields.
func mergeSplit(base, f *indexFile) ([]rawEntry, []byte, error) {
	type src struct {
		e    rawEntry
		data []byte
	}
	var ents []src
	if base != nil {
		ents = make([]src, len(base.entries))
		for i, e := range base.entries {
			ents[i] = src{e, base.data}
		}
	}
	own := f.entries
	if len(f.link.replaced) > len(own) {
		return nil, nil, errors.New("split index replaces more entries than it holds")
	}
	for k, pos := range f.link.replaced {
		if pos >= len(ents) || own[k].name != "" {
			return nil, nil, errors.New("bad replacement in a split index")
		}
		r := own[k]
		r.name, r.flags = ents[pos].e.name, ents[pos].e.flags
		ents[pos] = src{r, nil}
	}
	gone := make(map[int]bool, len(f.link.deleted))
	for _, pos := range f.link.deleted {
		if pos >= len(ents) {
			return nil, nil, errors.New("bad deletion in a split index")
		}
		gone[pos] = true
	}
	kept := ents[:0:0]
	for i, s := range ents {
		if !gone[i] {
			kept = append(kept, s)
		}
	}
	var added []src
	for _, e := range own[len(f.link.replaced):] {
		added = append(added, src{e, nil})
	}
	// Both lists are sorted by name then stage; an added entry replaces a
	// kept one with the same name and stage.
	cmpSrc := func(a, b src) int {
		if c := strings.Compare(a.e.name, b.e.name); c != 0 {
			return c
		}
		return a.e.stage() - b.e.stage()
	}
	merged := make([]src, 0, len(kept)+len(added))
	i, j := 0, 0
	for i < len(kept) || j < len(added) {
		switch {
		case j == len(added) || i < len(kept) && cmpSrc(kept[i], added[j]) < 0:
			merged = append(merged, kept[i])
			i++
		case i == len(kept) || cmpSrc(kept[i], added[j]) > 0:
			merged = append(merged, added[j])
			j++
		default:
			merged = append(merged, added[j])
			i++
			j++
		}
	}
	out := make([]rawEntry, len(merged))
	fixed := make([]byte, 0, len(merged)*entryFixed)
	for k, s := range merged {
		data := s.data
		if data == nil {
			data = f.data
		}
		out[k] = s.e
		out[k].off = uint32(len(fixed))
		fixed = append(fixed, data[s.e.off:s.e.off+entryFixed]...)
	}
	return out, fixed, nil
}

// list reads the index through `git ls-files --stage -z`, for the formats
// decode does not know. The entries have no stat data: each tracked file
// is read once to be matched with its entry.
func (ir *indexReader) list(ctx context.Context, r repository, key fileStat) (*gitIndex, error) {
	// The repository's git folder may be a program's work (a .git it
	// planted in a folder that had none): git runs here on the host, so
	// nothing its config names is run (core.fsmonitor is a command), and
	// it writes nothing.
	cmd := exec.CommandContext(ctx, "git", "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null",
		"-c", "core.untrackedCache=false", "ls-files", "--stage", "-z")
	cmd.Dir = r.top
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files: %w: %s", err, bytes.TrimSpace(stderr.Bytes()))
	}
	var ents []rawEntry
	var fixed []byte
	for line := range bytes.SplitSeq(out, []byte{0}) {
		if len(line) == 0 {
			continue
		}
		// <mode> SP <object> SP <stage> TAB <file>
		meta, name, ok := bytes.Cut(line, []byte{'\t'})
		fields := strings.Fields(string(meta))
		if !ok || len(fields) != 3 {
			return nil, fmt.Errorf("git ls-files: unexpected line %q", line)
		}
		mode, err1 := strconv.ParseUint(fields[0], 8, 32)
		hash, err2 := hex.DecodeString(fields[1])
		stage, err3 := strconv.Atoi(fields[2])
		if err := errors.Join(err1, err2, err3); err != nil || len(hash) != len(plumbing.ZeroHash) || stage > 3 {
			return nil, fmt.Errorf("git ls-files: unexpected line %q", line)
		}
		off := len(fixed)
		fixed = append(fixed, make([]byte, entryFixed)...)
		binary.BigEndian.PutUint32(fixed[off+entryMode:], uint32(mode))
		copy(fixed[off+entryHash:], hash)
		ents = append(ents, rawEntry{name: string(name), off: uint32(off), flags: uint16(stage) << 12, mode: uint32(mode)})
	}
	return newGitIndex(key, fixed, ents, nil, r.prefix()), nil
}
