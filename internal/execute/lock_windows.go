package execute

import (
	"os"

	"golang.org/x/sys/windows"
)

// errLockHeld is lockFile's error when another process holds the lock and
// wait is false.
var errLockHeld = windows.ERROR_LOCK_VIOLATION

// lockFile locks f's first byte exclusively (LockFileEx), waiting for it
// when wait is set. Closing f releases it, as the process's end does.
func lockFile(f *os.File, wait bool) error {
	flags := uint32(windows.LOCKFILE_EXCLUSIVE_LOCK)
	if !wait {
		flags |= windows.LOCKFILE_FAIL_IMMEDIATELY
	}
	return windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, 1, 0, new(windows.Overlapped))
}
