package changes

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// dirent is a directory entry, as os.ReadDir gives it: on Windows its
// stat data comes with the listing.
type dirent struct {
	name string
	de   fs.DirEntry
}

// dirList is one folder being read: its entries.
type dirList struct {
	ents []dirent
}

// openDir lists the folder at path.
func (t *tree) openDir(path string) (dirList, error) {
	des, err := os.ReadDir(path)
	if err != nil {
		return dirList{}, err
	}
	ents := make([]dirent, len(des))
	for i, de := range des {
		ents[i] = dirent{name: de.Name(), de: de}
	}
	return dirList{ents: ents}, nil
}

func (dirList) close() {}

// stat returns the stat data of one of d's entries; a folder's holds its
// type alone.
func (dirList) stat(e dirent) (fileStat, bool) {
	if e.de.IsDir() {
		return fileStat{mode: modeDir}, true
	}
	fi, err := e.de.Info()
	if err != nil {
		return fileStat{}, false
	}
	return fileStatOfInfo(fi)
}

// fileStatOfInfo turns what Windows says of a file into the stat data git
// records: no inode, no executable bit, the creation time as ctime (Git
// for Windows does the same). Files other than regular files, symbolic
// links and folders (junctions, devices) are not recorded.
func fileStatOfInfo(fi fs.FileInfo) (fileStat, bool) {
	st := fileStat{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	switch t := fi.Mode().Type(); {
	case t == 0:
		st.mode = modeRegular | 0o644
	case t&fs.ModeSymlink != 0:
		st.mode = modeSymlink | 0o777
	case t.IsDir():
		st.mode = modeDir
	default:
		return fileStat{}, false
	}
	if d, ok := fi.Sys().(*syscall.Win32FileAttributeData); ok {
		st.ctime = d.CreationTime.Nanoseconds()
	}
	return st, true
}

// lstatFile returns the stat data of one root-relative path, and whether
// it is a file a walk would record (ignoring aside).
func lstatFile(root, rel string) (fileStat, bool) {
	fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		return fileStat{}, false
	}
	st, ok := fileStatOfInfo(fi)
	if !ok || st.mode&modeType == modeDir {
		return fileStat{}, false
	}
	return st, true
}

// isNotExist reports a path that is gone.
func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// statOpen returns the stat data of an open file.
func statOpen(f *os.File) (fileStat, error) {
	fi, err := f.Stat()
	if err != nil {
		return fileStat{}, err
	}
	st, _ := fileStatOfInfo(fi)
	return st, nil
}

// mapOpen reads the first size bytes of f. Windows does not let a mapped
// file be replaced, and git replaces the index by renaming a new file over
// it: a copy is read instead.
func mapOpen(f *os.File, size int64) (data []byte, release func(), err error) {
	data = make([]byte, size)
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, nil, err
	}
	return data, func() {}, nil
}

// Flags of openRegular: Windows has no FIFOs to block on in a worktree,
// and os.Lstat-level checks cover links.
const (
	openNoFollow = 0
	openNonBlock = 0
)
