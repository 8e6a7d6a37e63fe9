package changes

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"
)

// Recorder finds what runs change in one worktree: Before records the
// worktree just before a run, and the Mark it returns tells what changed
// since. Between runs it keeps a baseline current from inotify events (see
// tracker), so that a run costs what it changed; without one (not built
// yet, failed, or after Close) it walks the worktree before and after.
//
// Its methods must not be called concurrently: its caller serializes runs
// (execute.Executor calls it under its turn), as what a run changed only
// means something when no other run changes files at the same time.
type Recorder struct {
	root   string
	logger *slog.Logger
	// life ends at Close: it stops a baseline being built in the
	// background.
	life context.Context
	end  context.CancelFunc
	// indexes reads the git index, reused while the index file is
	// unchanged.
	indexes *indexReader
	// tracker keeps the baseline between runs. Without Warm, the first run
	// walks the worktree before and after, and the tracker's baseline is
	// built in the background after it: a single run, as the CLI's exec
	// does, never waits for watching a worktree it will not see again.
	tracker *tracker
	// build is the tracker's baseline being built in the background; until
	// it is done, it owns the tracker. nil when none is.
	build *backgroundBuild
	// noTrackUntil: after the tracker failed, runs walk until then.
	noTrackUntil time.Time
	// failing is set once a tracker failure was warned about, until the
	// tracker works again: the warning is said once.
	failing bool
	closed  bool
	// addWatch replaces inotify_add_watch in tests; nil is the real one.
	addWatch func(fd int, path string, mask uint32) (int, error)
}

// backgroundBuild is a build of the tracker's baseline off the run path.
type backgroundBuild struct {
	done chan struct{} // closed when it ends
	err  error         // set before done is closed
}

// NewRecorder returns the recorder of the worktree at root. A nil logger
// discards.
func NewRecorder(root string, logger *slog.Logger) *Recorder {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	life, end := context.WithCancel(context.Background())
	return &Recorder{root: root, logger: logger, life: life, end: end, indexes: newIndexReader(logger)}
}

// Warm starts building, in the background, the baseline that lets runs
// report their changes in O(changes), and returns. A run that comes while
// the build is under way waits for it: the build is a walk already partly
// done, where falling back would cost a walk before the run and another
// after it.
func (r *Recorder) Warm() { r.startBuild() }

// Mark is the worktree as it was just before a run.
type Mark struct {
	r       *Recorder
	snap    *snapshot
	tracked bool
}

// Before records the worktree as it is now, just before a run: it waits
// for a baseline being built in the background (or ctx), brings the
// baseline up to date with what others changed since the last run, or
// walks the worktree when there is none.
func (r *Recorder) Before(ctx context.Context) (*Mark, error) {
	if err := r.awaitBuild(ctx); err != nil {
		return nil, fmt.Errorf("wait for the worktree baseline: %w", err)
	}
	m := &Mark{r: r, tracked: r.tracker != nil && !r.closed}
	if m.tracked {
		var err error
		if m.snap, err = r.tracker.prepare(ctx); err != nil {
			if ctx.Err() != nil {
				err = nil // not the tracker's failure; the walk fails too
			}
			r.stopTracking(err)
			m.tracked = false
		}
	}
	if !m.tracked {
		var err error
		if m.snap, err = takeSnapshot(ctx, r.root, r.indexes); err != nil {
			return nil, fmt.Errorf("record the worktree before the run: %w", err)
		}
	}
	return m, nil
}

// ReportTimeout bounds the work of finding what a run changed, past the
// program's end: a walk not done by then fails, a comparison not done
// reports the file as changed by its stat data.
const ReportTimeout = 5 * time.Second

// Changes returns what changed in the worktree since m was taken, in path
// order. It is called once, after the run; then the recorder is ready for
// the next Before.
func (m *Mark) Changes(ctx context.Context) ([]Change, error) {
	// The answer of a run waits on this: bounded, whatever the worktree
	// holds (a file of 16 GiB, a million new files).
	ctx, cancel := context.WithTimeout(ctx, ReportTimeout)
	defer cancel()
	r := m.r
	var (
		found []Change
		err   error
	)
	if m.tracked {
		found, err = r.tracker.report(ctx)
		if r.tracker.broken != nil {
			r.stopTracking(r.tracker.broken)
		}
	} else {
		found, err = m.snap.changes(ctx)
	}
	if err != nil {
		r.stopTracking(nil)
		return nil, fmt.Errorf("find what the run changed: %w", err)
	}
	if m.tracked && r.tracker != nil {
		r.failing = false
	}
	// The next run needs a baseline: this one's was rebuilt if events
	// could not tell what the run changed, or there was none.
	if r.tracker == nil || r.tracker.stale {
		r.startBuild()
	}
	return found, nil
}

// Files is how many files m recorded.
func (m *Mark) Files() int { return len(m.snap.pos) }

// Tracked says whether m came from the baseline kept between runs, rather
// than from a walk.
func (m *Mark) Tracked() bool { return m.tracked }

// Close stops keeping track of the worktree between runs (it stops a
// baseline being built and releases the inotify instance and the
// baseline). Runs after Close still work, walking the worktree before and
// after.
func (r *Recorder) Close() {
	r.end()
	r.closed = true
	if r.build != nil {
		<-r.build.done
		r.build = nil
	}
	r.stopTracking(nil)
}

// startBuild builds the tracker's baseline from scratch in the background,
// unless the Recorder is closed, backing off after a failure, or building
// already.
func (r *Recorder) startBuild() {
	if r.closed || r.build != nil || time.Now().Before(r.noTrackUntil) {
		return
	}
	if r.tracker == nil {
		r.tracker = newTracker(r.root, r.logger, r.addWatch)
		r.tracker.indexes = r.indexes
	}
	b := &backgroundBuild{done: make(chan struct{})}
	r.build = b
	k := r.tracker
	go func() {
		defer close(b.done)
		start := time.Now()
		if b.err = k.build(r.life); b.err == nil {
			r.logger.Debug("worktree baseline built", "files", len(k.snap.pos), "dirs", len(k.dirs),
				"duration", time.Since(start).Round(time.Microsecond))
		}
	}()
}

// awaitBuild waits for a baseline being built in the background, and stops
// tracking if the build failed. It returns ctx's error if ctx ends first;
// the build goes on.
func (r *Recorder) awaitBuild(ctx context.Context) error {
	b := r.build
	if b == nil {
		return nil
	}
	select {
	case <-b.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	r.build = nil
	if b.err != nil {
		r.stopTracking(b.err)
	}
	return nil
}

// stopTracking drops the tracker after err (nil: on purpose). After a
// failure, runs walk the worktree for a while: whatever made the tracker
// fail (the inotify limits, a folder it cannot handle) rarely goes away
// within seconds, and every try costs a walk. The first failure is
// warned about; those that follow until the tracker works again are not.
func (r *Recorder) stopTracking(err error) {
	if r.tracker != nil {
		r.tracker.close()
		r.tracker = nil
	}
	if err == nil {
		return
	}
	r.noTrackUntil = time.Now().Add(trackerRetry)
	level := slog.LevelWarn
	if r.failing {
		level = slog.LevelDebug
	}
	r.failing = true
	msg := "cannot keep track of the worktree; finding what runs changed by walking it"
	if errors.Is(err, errWatchLimit) {
		msg = "file watcher unavailable; finding what runs changed by walking the worktree"
	}
	r.logger.Log(context.Background(), level, msg, "err", err, "retry", trackerRetry)
}
