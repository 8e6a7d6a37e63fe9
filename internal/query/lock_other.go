//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package query

import (
	"fmt"
	"os"
)

// lockDir opens the lock file without locking it: this platform has no
// flock. bleve's own lock on its root.bolt still keeps a second Index out of
// the files, but by waiting rather than failing with ErrLocked.
func lockDir(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open index lock: %w", err)
	}
	return f, nil
}
