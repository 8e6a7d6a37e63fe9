//go:build unix

package engine

import (
	"errors"
	"syscall"
)

// processGone reports whether no process has the id pid. A process this
// one may not signal is there all the same.
func processGone(pid int) bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }
