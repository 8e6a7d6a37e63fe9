//go:build unix

package execute

import (
	"errors"
	"os"
	"syscall"
)

// errLockHeld is lockFile's error when another process holds the lock and
// wait is false.
var errLockHeld = syscall.EWOULDBLOCK

// lockFile takes an exclusive flock on f, waiting for it when wait is set.
// A signal that interrupts flock (the Go runtime's own preemption signals
// do) makes it try again.
func lockFile(f *os.File, wait bool) error {
	how := syscall.LOCK_EX
	if !wait {
		how |= syscall.LOCK_NB
	}
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
