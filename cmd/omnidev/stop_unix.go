//go:build unix

package main

import "syscall"

// askToStop asks the process pid to stop gracefully (SIGTERM).
func askToStop(pid int) error { return syscall.Kill(pid, syscall.SIGTERM) }

// processExists reports whether the process pid is still there to be
// signalled.
func processExists(pid int) bool { return syscall.Kill(pid, 0) == nil }
