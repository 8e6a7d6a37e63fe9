package capability

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
)

// maxFileBytes caps each file Load reads (TOML, Markdown, types, .env), so
// that a hostile or broken tree cannot make the server allocate without bound.
// Real capability files are a few kilobytes.
const maxFileBytes = 1 << 20

var (
	errTooLarge       = fmt.Errorf("file is larger than %d MiB; shrink or split it", maxFileBytes>>20)
	errNotRegular     = errors.New("not a regular file")
	errSymlinkEscapes = errors.New("symlink leads outside the capability folder or cannot be resolved; it is not followed")
)

// readFile reads name from fsys, refusing anything that is not a regular file
// or is larger than maxFileBytes. The regular-file check comes first because
// opening a FIFO or a device could block the load forever.
//
// When fsys is an os.Root's FS, a symlink leaving the root fails the Stat;
// that failure is reported as errSymlinkEscapes.
func readFile(fsys fs.FS, name string) ([]byte, error) {
	info, err := fs.Stat(fsys, name)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) && throughSymlink(fsys, name) {
			return nil, errSymlinkEscapes
		}
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, errNotRegular
	}
	if info.Size() > maxFileBytes {
		return nil, errTooLarge
	}
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Reading no further than the size Stat gave keeps the cap a cap even if
	// the file grows meanwhile; a file that changes while it is read is
	// seen by the watcher, which loads again.
	data := make([]byte, info.Size())
	n, err := io.ReadFull(f, data)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return nil, err
	}
	return data[:n], nil
}

// throughSymlink reports whether name or one of its parent folders is a symlink.
func throughSymlink(fsys fs.FS, name string) bool {
	for p := name; p != "." && p != "/"; p = path.Dir(p) {
		if info, err := fs.Lstat(fsys, p); err == nil && info.Mode()&fs.ModeSymlink != 0 {
			return true
		}
	}
	return false
}

// readOptional is readFile for files that may be absent: a missing file
// returns nil data and no error.
func readOptional(fsys fs.FS, name string) ([]byte, bool, error) {
	data, err := readFile(fsys, name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	return data, err == nil, err
}

// readErrorMessage turns a readFile error into a Problem message. Errors of
// the os package carry the path, which the Problem already shows.
func readErrorMessage(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return "cannot read: " + err.Error()
}
