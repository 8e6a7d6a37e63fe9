//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package query

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockDir takes an exclusive lock on the lock file at path, held until the
// returned file is closed. It fails at once, with ErrLocked, when another
// Index holds it — in this process or another — instead of waiting: the
// caller must learn that the folder is in use, and must never mistake the
// other Index's files for a corrupt index and delete them.
func lockDir(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open index lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s", ErrLocked, path)
		}
		return nil, fmt.Errorf("lock index: %w", err)
	}
	return f, nil
}
