package changes

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// Files in the worktree are written by programs, which are not trusted: a
// .gitignore may be a FIFO (an open that blocks forever), a symlink to
// /dev/zero (a read that never ends), or a sparse file of terabytes. The
// server opens them without following a final symlink and without blocking,
// reads only regular files, and within a bound.

// Bounds on what is read of one file.
const (
	// maxPatternBytes bounds an ignore file; a larger one is not read, as
	// if absent (git's own limit is 100 MB; real ones are a few KB).
	maxPatternBytes = 1 << 20
	// maxHashBytes bounds a file hashed to learn whether it changed; a
	// larger one whose size or time changed is reported as modified,
	// marked too_large, without reading it.
	maxHashBytes = 64 << 20
)

var (
	errNotRegular = errors.New("not a regular file")
	errTooLarge   = errors.New("file too large to read")
)

// openRegular opens path for reading if it is a regular file, following no
// symlink at its end and never blocking on a FIFO or a device.
func openRegular(path string) (*os.File, os.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openNoFollow|openNonBlock, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w", path, errNotRegular)
	}
	return f, fi, nil
}

// readRegular reads a regular file of at most limit bytes (see openRegular).
func readRegular(path string, limit int64) ([]byte, error) {
	f, fi, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > limit {
		return nil, fmt.Errorf("%s: %w (%d bytes, at most %d)", path, errTooLarge, fi.Size(), limit)
	}
	return readAtMost(f, path, limit)
}

// readAtMost reads f to its end, failing past limit bytes: the size may
// grow while it is read.
func readAtMost(f *os.File, name string, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: %w (grew past %d bytes)", name, errTooLarge, limit)
	}
	return data, nil
}

// ReadIn reads the file name in the folder d as ReadFile does (a symlink's
// target, or a regular file of at most limit bytes), and only if it is
// still the file fi, d.Lstat(name) of a moment before: a file swapped for
// a symlink in between is refused, never followed, and a FIFO never
// blocks. It serves code that reads a worktree a program may still be
// changing.
func ReadIn(d *os.Root, name string, fi os.FileInfo, limit int64) ([]byte, error) {
	if fi.Mode()&os.ModeSymlink != 0 {
		target, err := d.Readlink(name)
		return []byte(target), err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w", name, errNotRegular)
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("%s: %w (%d bytes, at most %d)", name, errTooLarge, fi.Size(), limit)
	}
	f, err := d.OpenFile(name, os.O_RDONLY|openNonBlock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !os.SameFile(fi, st) || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w", name, ErrReplaced)
	}
	return readAtMost(f, name, limit)
}

// ErrReplaced says a file or folder was replaced while it was being read.
var ErrReplaced = errors.New("replaced while it was read")
