package execute

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// runLock is the repository's cross-process run lock, an flock (LockFileEx
// on Windows: lock_*.go) on .omni/run.lock held around each run by every
// omnidev process that runs programs there (two servers, a server and
// `omnidev exec`): runs share .omni/sandbox/main.ts and the worktree, and
// a change report must not credit one run with another's edits. Within a
// process the Executor's turn queues runs first, so one Executor has at
// most one acquisition waiting in flock.
//
// flock takes no context, so a contended lock is waited for by a blocking
// flock on its own goroutine (no polling). A run whose context ends first
// abandons that acquisition and leaves it pending: the next run adopts it
// rather than start a second one, and if it completes while abandoned it
// releases the lock at once, so a cancelled call never holds up the
// repository's other runs.
type runLock struct {
	path string
	// pending is an abandoned acquisition that may still be waiting.
	// Guarded by the Executor's turn.
	pending *acquisition
}

// acquisition is one blocking flock in progress.
type acquisition struct {
	done chan struct{} // closed when flock returned
	mu   sync.Mutex
	// Set before done is closed.
	f   *os.File // the locked file; nil on error or when abandoned
	err error
	// abandoned: nobody waits for the lock any more.
	abandoned bool
}

// lock takes the run lock, waiting as long as ctx allows. The returned func
// releases it; so does the process's death.
func (l *runLock) lock(ctx context.Context) (unlock func(), err error) {
	a := l.pending
	l.pending = nil
	if a == nil || !a.setAbandoned(false) {
		f, err := openLockFile(l.path)
		if err != nil {
			return nil, fmt.Errorf("open the run lock: %w", err)
		}
		err = lockFile(f, false)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if !errors.Is(err, errLockHeld) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", l.path, err)
		}
		a = &acquisition{done: make(chan struct{})}
		go a.wait(f)
	}
	select {
	case <-a.done:
		if a.err != nil {
			return nil, fmt.Errorf("lock %s: %w", l.path, a.err)
		}
		return func() { a.f.Close() }, nil
	case <-ctx.Done():
		if a.setAbandoned(true) {
			l.pending = a
		} else if a.f != nil { // it completed meanwhile: give the lock back
			a.f.Close()
		}
		return nil, fmt.Errorf("wait for another omnidev process's run in this repository: %w", ctx.Err())
	}
}

// wait blocks in flock until f is locked, then hands it to whoever waits,
// or releases it if nobody does any more.
func (a *acquisition) wait(f *os.File) {
	err := lockFile(f, true)
	a.mu.Lock()
	defer a.mu.Unlock()
	if err != nil || a.abandoned {
		f.Close()
		a.err = err
	} else {
		a.f = f
	}
	close(a.done)
}

// setAbandoned gives a up (true) or takes it back (false). It reports
// false, changing nothing, if a has already completed: given up, it has
// released the lock; otherwise the caller owns its result.
func (a *acquisition) setAbandoned(abandoned bool) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	select {
	case <-a.done:
		return false
	default:
		a.abandoned = abandoned
		return true
	}
}

// openLockFile opens (creating it) the lock file in its folder, .omni, as
// an os.Root: a clone's .omni/run.lock may be a symlink, and an open that
// followed it would create a file wherever it leads.
func openLockFile(path string) (*os.File, error) {
	d, err := os.OpenRoot(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.OpenFile(filepath.Base(path), os.O_CREATE|os.O_RDWR, 0o644)
}
