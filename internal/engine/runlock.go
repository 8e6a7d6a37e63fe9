package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// runLockPoll is how often a run waiting for another process's run tries
// the lock again: flock has no timeout or context, and a run costs far more
// than 10 ms, so polling adds nothing noticeable.
const runLockPoll = 10 * time.Millisecond

// lockRuns takes the repository's run lock, .omni/run.lock. Every omnidev
// process serving or running programs in a repository takes it around a
// run: they share .omni/sandbox/main.ts and the worktree, and a change
// report must not credit one run with another's edits. It waits as long as
// ctx allows. The lock is released when the returned func is called (or
// the process dies).
func lockRuns(ctx context.Context, root string) (unlock func(), err error) {
	path := filepath.Join(root, ".omni", "run.lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open run lock: %w", err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for another run in this repository: %w", ctx.Err())
		case <-time.After(runLockPoll):
		}
	}
}
