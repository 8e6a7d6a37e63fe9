//go:build unix

package testrepo

import "syscall"

// Alive reports whether the process pid is still there (a zombie too).
func Alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// Kill kills the process pid, if it is still there.
func Kill(pid int) { syscall.Kill(pid, syscall.SIGKILL) }
