package execute

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// TestRunLock checks the cross-process run lock as separate processes see
// it (each runLock opens the file on its own, so flock sets them against
// one another as it would two processes): a waiter honours its context, and
// a waiter that gave up never holds the lock afterwards.
func TestRunLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.lock")
	holder, gaveUp, other := &runLock{path: path}, &runLock{path: path}, &runLock{path: path}

	unlock, err := holder.lock(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if _, err := gaveUp.lock(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waiting for a held lock: %v, want the context's error", err)
	}
	unlock()

	// The abandoned acquisition gets the lock now and must let it go.
	ctx, cancel = context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	unlock, err = other.lock(ctx)
	if err != nil {
		t.Fatalf("lock after the holder released it: %v (the waiter that gave up kept it)", err)
	}
	unlock()

	// The one that gave up can lock again, adopting its pending acquisition
	// or starting a new one.
	unlock, err = gaveUp.lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	unlock()
}

// TestRunLockAdopts checks that a run after one that gave up waits on the
// same acquisition rather than start another, and that an acquisition
// nobody waits for releases the lock as soon as it gets it.
func TestRunLockAdopts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.lock")
	holder, waiter := &runLock{path: path}, &runLock{path: path}
	unlock, err := holder.lock(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var pending *acquisition
	for i := range 2 {
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
		_, err := waiter.lock(ctx)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("wait %d for a held lock: %v, want the context's error", i, err)
		}
		if waiter.pending == nil || (pending != nil && waiter.pending != pending) {
			t.Fatalf("wait %d: pending acquisition %p, want the first one (%p) adopted", i, waiter.pending, pending)
		}
		pending = waiter.pending
	}
	unlock()
	<-pending.done
	if pending.f != nil || pending.err != nil {
		t.Errorf("abandoned acquisition: file %v, error %v; want the lock released", pending.f, pending.err)
	}
}
