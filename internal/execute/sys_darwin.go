package execute

import (
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

func fileStatOfSys(st *syscall.Stat_t) fileStat {
	return fileStat{size: st.Size, mtime: st.Mtimespec.Nano(), ctime: st.Ctimespec.Nano(), ino: st.Ino, mode: uint32(st.Mode)}
}

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

// waitExited blocks until the process pid has exited, without reaping it:
// a kqueue reports its exit.
func waitExited(pid int) {
	kq, err := unix.Kqueue()
	if err != nil {
		return
	}
	defer unix.Close(kq)
	ev := unix.Kevent_t{Ident: uint64(pid), Filter: unix.EVFILT_PROC, Flags: unix.EV_ADD | unix.EV_ONESHOT, Fflags: unix.NOTE_EXIT}
	out := make([]unix.Kevent_t, 1)
	for {
		_, err := unix.Kevent(kq, []unix.Kevent_t{ev}, out, nil)
		if err != unix.EINTR {
			return
		}
	}
}
