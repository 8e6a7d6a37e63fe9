package changes

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// inotify is a raw inotify instance read without a goroutine: its events
// wait in the kernel's queue until drain reads them.
//
// This is what makes the end-of-run report exact without a debounce. The
// kernel queues an event from inside the system call that caused it, and
// events of one instance are delivered in order; so once the program has
// exited (and been reaped), every event of its changes is already queued,
// and reading until the queue is empty (EAGAIN on a non-blocking read) has
// seen all of them. internal/watch (fsnotify behind a goroutine and a
// debounce) cannot say "everything up to now has been read".
type inotify struct {
	fd  int
	buf []byte
	// add is unix.InotifyAddWatch except in tests that simulate the watch
	// limit (ENOSPC).
	add func(fd int, path string, mask uint32) (int, error)
}

// watchMask is what a watched folder reports: every way a file's content,
// type, mode or name can change (IN_CLOSE_WRITE also catches writes through
// a shared mapping, which raise no IN_MODIFY, once the file is closed),
// and the folder's own removal.
const watchMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MODIFY | unix.IN_ATTRIB |
	unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_CLOSE_WRITE |
	unix.IN_DELETE_SELF | unix.IN_MOVE_SELF |
	unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW | unix.IN_EXCL_UNLINK

// inotifyEvent is one event: the watch it came from, what happened, and
// the entry of the watched folder it happened to ("" for the folder).
type inotifyEvent struct {
	wd   int32
	mask uint32
	name string
}

// errWatchLimit wraps the kernel's refusals that mean "no more inotify
// resources": the watch limit (ENOSPC) or the instance limit (EMFILE).
var errWatchLimit = errors.New("inotify limit reached")

func newInotify(add func(fd int, path string, mask uint32) (int, error)) (*inotify, error) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		if errors.Is(err, unix.EMFILE) || errors.Is(err, unix.ENFILE) {
			return nil, fmt.Errorf("create inotify instance: %w: %w; raise fs.inotify.max_user_instances (sysctl)", errWatchLimit, err)
		}
		return nil, fmt.Errorf("create inotify instance: %w", err)
	}
	if add == nil {
		add = unix.InotifyAddWatch
	}
	return &inotify{fd: fd, buf: make([]byte, 64<<10), add: add}, nil
}

// watch starts watching one folder and returns the watch descriptor (the
// same one again for a folder already watched).
func (n *inotify) watch(path string) (int32, error) {
	wd, err := n.add(n.fd, path, watchMask)
	if err != nil {
		if errors.Is(err, unix.ENOSPC) {
			return 0, fmt.Errorf("watch %s: %w: %w; raise fs.inotify.max_user_watches (sysctl)", path, errWatchLimit, err)
		}
		return 0, &os.PathError{Op: "watch", Path: path, Err: err}
	}
	return int32(wd), nil
}

// unwatch stops a watch. The kernel drops the watch of a deleted folder by
// itself, so an error is expected and harmless.
func (n *inotify) unwatch(wd int32) {
	unix.InotifyRmWatch(n.fd, uint32(wd))
}

// drain reads every event queued so far, in order.
func (n *inotify) drain(f func(inotifyEvent)) error {
	for {
		k, err := unix.Read(n.fd, n.buf)
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read inotify events: %w", err)
		}
		// struct inotify_event { s32 wd; u32 mask; u32 cookie; u32 len; char name[len]; }
		for b := n.buf[:k]; len(b) >= unix.SizeofInotifyEvent; {
			size := unix.SizeofInotifyEvent + int(binary.NativeEndian.Uint32(b[12:16]))
			if size > len(b) {
				break
			}
			ev := inotifyEvent{wd: int32(binary.NativeEndian.Uint32(b[0:4])), mask: binary.NativeEndian.Uint32(b[4:8])}
			name := b[unix.SizeofInotifyEvent:size]
			for len(name) > 0 && name[len(name)-1] == 0 {
				name = name[:len(name)-1]
			}
			ev.name = string(name)
			f(ev)
			b = b[size:]
		}
	}
}

func (n *inotify) close() error {
	return unix.Close(n.fd)
}

// closeFD closes an inotify instance's descriptor: the cleanup of one
// dropped without close.
func closeFD(fd int) { unix.Close(fd) }

// The inotify event bits the tracker reads.
const (
	inQOverflow  = unix.IN_Q_OVERFLOW
	inIgnored    = unix.IN_IGNORED
	inDeleteSelf = unix.IN_DELETE_SELF
	inMoveSelf   = unix.IN_MOVE_SELF
	inCreate     = unix.IN_CREATE
	inDelete     = unix.IN_DELETE
	inMovedFrom  = unix.IN_MOVED_FROM
	inMovedTo    = unix.IN_MOVED_TO
	inIsDir      = unix.IN_ISDIR
	inAttrib     = unix.IN_ATTRIB
)
