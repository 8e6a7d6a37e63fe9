//go:build !linux

package changes

import "errors"

// inotify is Linux's: elsewhere the tracker is never built and every run
// walks the worktree before and after.
type inotify struct{ fd int }

type inotifyEvent struct {
	wd   int32
	mask uint32
	name string
}

var errWatchLimit = errors.New("no inotify on this system")

// The Linux values of the event bits the tracker reads; nothing raises
// them here.
const (
	inQOverflow  = 0x4000
	inIgnored    = 0x8000
	inDeleteSelf = 0x400
	inMoveSelf   = 0x800
	inCreate     = 0x100
	inDelete     = 0x200
	inMovedFrom  = 0x40
	inMovedTo    = 0x80
	inIsDir      = 0x40000000
	inAttrib     = 0x4
)

func newInotify(func(int, string, uint32) (int, error)) (*inotify, error) {
	return nil, errWatchLimit
}

func (n *inotify) watch(string) (int32, error)    { return 0, errWatchLimit }
func (n *inotify) unwatch(int32)                  {}
func (n *inotify) drain(func(inotifyEvent)) error { return errWatchLimit }
func (n *inotify) close() error                   { return nil }

func closeFD(int) {}
