package changes

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// fileStat is what a walk records of a file: enough to tell that it changed
// without reading it.
type fileStat struct {
	size  int64
	mtime int64 // nanoseconds since the epoch
	ctime int64 // catches rewrites that restore mtime (touch -r, cp -p)
	ino   uint64
	mode  uint32 // st_mode: type and permission bits
}

// File types in fileStat.mode, as st_mode and git's index hold them on
// every system.
const (
	modeType    = 0o170000
	modeDir     = 0o040000
	modeRegular = 0o100000
	modeSymlink = 0o120000
)

func (s fileStat) isLink() bool { return s.mode&modeType == modeSymlink }

// executable is the one permission bit git records.
func (s fileStat) executable() bool { return s.mode&0o100 != 0 }

// walkers returns how many directories are read at once. The walk is
// syscall-bound (getdents, fstatat) on cached metadata, so a few more than
// the cores keeps them busy while one goroutine blocks; more only adds
// contention.
func walkers() int { return max(4, 2*runtime.GOMAXPROCS(0)) }

// tree is what a walk covers: the files below root, minus .git folders,
// root's .omni, nested repositories and ignored files. Tracked files are
// never ignored, as in git, even when a pattern matches them.
type tree struct {
	root string
	// topDir is root's path from the worktree top, as gitignore path
	// components: patterns are anchored at the top, not at root.
	topDir []string
	// index is the git index (nil outside git).
	index *gitIndex
	// base are the patterns that apply before any .gitignore below root:
	// the global excludes file, info/exclude, .gitignore files above root.
	base []gitignore.Pattern
	// bufs recycles getdents buffers across the folders of a walk.
	bufs sync.Pool
	// enter, if set, is called with each folder before it is read (the
	// tracker watches it there, so that whatever changes after the read is
	// reported) and listed with what applied inside it once it has been.
	// An error from enter ends the walk with that error, except
	// errSkipDir, which leaves the folder out as if it could not be read.
	enter  func(dir string) error
	listed func(dir string, patterns []gitignore.Pattern, ok bool)
}

// walk returns every file of the tree with its stat data, in no particular
// order. Directories are read on several goroutines. Entries that vanish or
// cannot be read while it runs are left out rather than failing the walk:
// they are not files a run can report.
func (t *tree) walk(ctx context.Context) ([]walkedFile, error) {
	var (
		mu       sync.Mutex
		files    = make([]walkedFile, 0, t.index.len()+64)
		enterErr error
		wg       sync.WaitGroup
		sem      = make(chan struct{}, walkers())
	)
	var visit func(dir string, patterns []gitignore.Pattern)
	visit = func(dir string, patterns []gitignore.Pattern) {
		defer wg.Done()
		if ctx.Err() != nil {
			return
		}
		sem <- struct{}{}
		if t.enter != nil {
			if err := t.enter(dir); err != nil {
				<-sem
				if err != errSkipDir {
					mu.Lock()
					enterErr = cmp.Or(enterErr, err)
					mu.Unlock()
				}
				return
			}
		}
		found, subdirs, own, ok := t.readDir(dir, patterns)
		if t.listed != nil {
			t.listed(dir, own, ok)
		}
		<-sem
		mu.Lock()
		files = append(files, found...)
		mu.Unlock()
		for _, sd := range subdirs {
			wg.Add(1)
			go visit(sd.rel, sd.patterns)
		}
	}
	wg.Add(1)
	go visit("", t.base)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if enterErr != nil {
		return nil, enterErr
	}
	return files, nil
}

// errSkipDir, returned by tree.enter, leaves a folder out of the walk.
var errSkipDir = errors.New("skip this folder")

type walkedFile struct {
	rel     string
	stat    fileStat
	entry   indexEntry // the file's index entry, when tracked
	tracked bool
}

type walkedDir struct {
	rel      string
	patterns []gitignore.Pattern
}

// readDir lists one directory: its files to record and its subdirectories
// to walk, with the ignore patterns that apply in them (own: patterns plus
// the directory's own .gitignore). ok is false when the directory cannot be
// read or holds a nested repository: nothing in it is recorded.
func (t *tree) readDir(dir string, patterns []gitignore.Pattern) (files []walkedFile, dirs []walkedDir, own []gitignore.Pattern, ok bool) {
	d, err := t.openDir(filepath.Join(t.root, filepath.FromSlash(dir)))
	if err != nil {
		return nil, nil, nil, false
	}
	defer d.close()
	ents := d.ents
	has := func(name string) bool {
		return slices.ContainsFunc(ents, func(e dirent) bool { return e.name == name })
	}
	if dir != "" && has(".git") {
		// A nested repository (or submodule) has a history of its own: git
		// does not look inside, and neither do we.
		return nil, nil, nil, false
	}
	components := t.components(dir)
	if has(".gitignore") {
		own := readPatterns(filepath.Join(t.root, filepath.FromSlash(dir), ".gitignore"), components)
		// Clip so that siblings appending their own never share a backing array.
		patterns = append(slices.Clip(patterns), own...)
	}
	matcher := gitignore.NewMatcher(patterns)
	for _, e := range ents {
		if e.name == ".git" || dir == "" && e.name == ".omni" {
			continue
		}
		rel := e.name
		if dir != "" {
			rel = dir + "/" + e.name
		}
		st, ok := d.stat(e)
		if !ok {
			continue // gone since it was listed
		}
		switch st.mode & modeType {
		case modeDir:
			if matcher.Match(append(components, e.name), true) && !t.index.hasBelow(rel) {
				continue
			}
			dirs = append(dirs, walkedDir{rel: rel, patterns: patterns})
		case modeRegular, modeSymlink:
			entry, tracked := t.index.entry(rel)
			if !tracked && matcher.Match(append(components, e.name), false) {
				continue
			}
			files = append(files, walkedFile{rel: rel, entry: entry, tracked: tracked, stat: st})
		}
		// Sockets, FIFOs and devices are not content git (or we) can track.
	}
	return files, dirs, slices.Clip(patterns), true
}

// components returns the gitignore path of a root-relative dir: its
// components from the worktree top. The result is clipped so appending a
// name never writes into a shared array.
func (t *tree) components(dir string) []string {
	c := slices.Clip(t.topDir)
	if dir != "" {
		c = append(c, strings.Split(dir, "/")...)
	}
	return slices.Clip(c)
}

// readPatterns parses a gitignore-format file; a missing or unreadable
// file has no patterns. domain is the folder the patterns are relative to.
func readPatterns(path string, domain []string) []gitignore.Pattern {
	// As git does since 2.32, an ignore file that is a symlink is not
	// followed; nor is one that is not a regular file, or too large.
	data, err := readRegular(path, maxPatternBytes)
	if err != nil {
		return nil
	}
	return parsePatterns(data, domain)
}

func parsePatterns(data []byte, domain []string) []gitignore.Pattern {
	var ps []gitignore.Pattern
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		// git drops a trailing CR, so files saved with CRLF still work.
		line := strings.TrimSuffix(sc.Text(), "\r")
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(line, domain))
	}
	return ps
}
