package changes

import (
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

func fileStatOf(st *unix.Stat_t) fileStat {
	return fileStat{size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(), ino: st.Ino, mode: uint32(st.Mode)}
}

// readDirents lists the folder open as fd, with each entry's type, through
// os.File (macOS has no getdents64).
func readDirents(fd int, _ []byte) ([]dirent, error) {
	dup, err := unix.Dup(fd)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(dup), "")
	defer f.Close()
	entries, err := f.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	ents := make([]dirent, 0, len(entries))
	for _, e := range entries {
		var typ uint8 = unix.DT_UNKNOWN
		switch t := e.Type(); {
		case t.IsDir():
			typ = unix.DT_DIR
		case t.IsRegular():
			typ = unix.DT_REG
		case t&fs.ModeSymlink != 0:
			typ = unix.DT_LNK
		}
		ents = append(ents, dirent{name: e.Name(), typ: typ})
	}
	return ents, nil
}
