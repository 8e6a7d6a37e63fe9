//go:build unix

package changes

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// dirent is a directory entry: its name and its type (unix.DT_*).
type dirent struct {
	name string
	typ  uint8
}

// direntBuf holds what one getdents call returns: a few hundred entries.
type direntBuf [8 << 10]byte

// dirList is one folder being read: its entries, and the open folder their
// stat data is read relative to.
type dirList struct {
	fd   int
	ents []dirent
}

// openDir lists the folder at path.
func (t *tree) openDir(path string) (dirList, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return dirList{}, err
	}
	buf, _ := t.bufs.Get().(*direntBuf)
	if buf == nil {
		buf = new(direntBuf)
	}
	ents, err := readDirents(fd, buf[:])
	t.bufs.Put(buf)
	if err != nil {
		unix.Close(fd)
		return dirList{}, err
	}
	return dirList{fd: fd, ents: ents}, nil
}

func (d dirList) close() { unix.Close(d.fd) }

// stat returns the stat data of one of d's entries. Folders need no stat:
// only files' data is compared, so a folder's holds its type alone.
// Entries of unknown type (filesystems without d_type) get one too.
func (d dirList) stat(e dirent) (fileStat, bool) {
	if e.typ == unix.DT_DIR {
		return fileStat{mode: modeDir}, true
	}
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd, e.name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return fileStat{}, false
	}
	return fileStatOf(&st), true
}

// lstatFile returns the stat data of one root-relative path, and whether
// it is a file a walk would record (ignoring aside).
func lstatFile(root, rel string) (fileStat, bool) {
	var st unix.Stat_t
	if err := unix.Lstat(filepath.Join(root, filepath.FromSlash(rel)), &st); err != nil {
		return fileStat{}, false
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG, unix.S_IFLNK:
		return fileStatOf(&st), true
	}
	return fileStat{}, false
}

// isNotExist reports a path that is gone, including one whose parent became
// a file.
func isNotExist(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ENOTDIR)
}

// statOpen returns the stat data of an open file.
func statOpen(f *os.File) (fileStat, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return fileStat{}, err
	}
	return fileStatOf(&st), nil
}

// mapOpen maps the first size bytes of f, read-only; release unmaps them.
func mapOpen(f *os.File, size int64) (data []byte, release func(), err error) {
	data, err = unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return data, func() { unix.Munmap(data) }, nil
}

// Flags of openRegular.
const (
	openNoFollow = unix.O_NOFOLLOW
	openNonBlock = unix.O_NONBLOCK
)
