package execute

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// repository is the git side of a root: the repository (for blobs) and
// where root sits in its worktree. The zero value means "not in git".
type repository struct {
	repo *git.Repository
	// topDir is root's path from the worktree top, as path components.
	topDir []string
}

// openRepository finds the repository whose worktree holds root. A folder
// outside git (or in a bare repository) is not an error: every file is then
// untracked.
func openRepository(root string) (repository, error) {
	repo, err := git.PlainOpenWithOptions(root, &git.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true})
	if errors.Is(err, git.ErrRepositoryNotExists) {
		return repository{}, nil
	}
	if err != nil {
		return repository{}, fmt.Errorf("open git repository: %w", err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		return repository{}, nil
	}
	rel, err := filepath.Rel(wt.Filesystem.Root(), root)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return repository{}, nil
	}
	r := repository{repo: repo}
	if rel != "." {
		r.topDir = strings.Split(filepath.ToSlash(rel), "/")
	}
	return r, nil
}

// gitIndex is what a snapshot needs of the git index: the stage-0 entries
// below root. Its methods accept a nil receiver (no repository).
type gitIndex struct {
	// file is the index file's stat data when it was decoded: the key under
	// which an Executor reuses it.
	file    fileStat
	modTime int64 // the index file's mtime, for the racy-clean test
	entries map[string]*index.Entry
	tracked []string // sorted keys of entries
}

func (x *gitIndex) len() int {
	if x == nil {
		return 0
	}
	return len(x.entries)
}

func (x *gitIndex) entry(rel string) *index.Entry {
	if x == nil {
		return nil
	}
	return x.entries[rel]
}

// hasBelow reports whether a file inside dir is tracked, in which case an
// ignored dir must still be walked.
func (x *gitIndex) hasBelow(dir string) bool {
	if x == nil {
		return false
	}
	prefix := dir + "/"
	i, _ := slices.BinarySearch(x.tracked, prefix)
	return i < len(x.tracked) && strings.HasPrefix(x.tracked[i], prefix)
}

// readIndex returns the repository's index, reusing cached when the index
// file has not changed since cached was decoded: decoding costs more than a
// worktree walk on big repositories (go-git's decoder reads field by field
// and hashes the file), and most runs leave the index alone. It returns nil
// outside git, and when the index cannot be read (logged: every file is
// then compared against copies, slower but still right).
func readIndex(r repository, cached *gitIndex, logger *slog.Logger) *gitIndex {
	if r.repo == nil {
		return nil
	}
	var key fileStat
	if st, ok := r.repo.Storer.(*filesystem.Storage); ok {
		if fi, err := st.Filesystem().Stat("index"); err == nil {
			if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
				key = fileStatOfSys(sys)
			}
		}
	}
	if cached != nil && key != (fileStat{}) && cached.file == key {
		return cached
	}
	idx, err := r.repo.Storer.Index()
	if err != nil {
		logger.Warn("cannot read the git index; comparing every file with a copy instead", "err", err)
		return nil
	}
	prefix := ""
	if len(r.topDir) > 0 {
		prefix = strings.Join(r.topDir, "/") + "/"
	}
	x := &gitIndex{file: key, modTime: idx.ModTime.UnixNano(), entries: make(map[string]*index.Entry, len(idx.Entries))}
	for _, e := range idx.Entries {
		// Stage 0 is a merged entry; conflicted paths (stages 1-3) have no
		// single "before" blob and are treated as untracked. Submodules are
		// folders the walk does not enter.
		if e.Stage != 0 || e.Mode == filemode.Submodule || !strings.HasPrefix(e.Name, prefix) {
			continue
		}
		x.entries[e.Name[len(prefix):]] = e
	}
	x.tracked = make([]string, 0, len(x.entries))
	for rel := range x.entries {
		x.tracked = append(x.tracked, rel)
	}
	slices.Sort(x.tracked)
	return x
}

// matchesIndex reports whether a file's stat data says it still has its
// index entry's content, as git decides without reading it: same type,
// size and mtime (and inode when recorded). A file modified no earlier
// than the index was written is "racily clean" - it may have changed
// within the same timestamp tick after being hashed - and must be read.
func (x *gitIndex) matchesIndex(e *index.Entry, st fileStat) bool {
	return (e.Mode == filemode.Symlink) == st.isLink() &&
		e.Size == uint32(st.size) &&
		!e.ModifiedAt.IsZero() && e.ModifiedAt.UnixNano() == st.mtime &&
		(e.Inode == 0 || e.Inode == uint32(st.ino)) &&
		st.mtime < x.modTime
}
