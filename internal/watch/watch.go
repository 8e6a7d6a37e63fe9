package watch

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
)

// DefaultDebounce is how long the file system must stay quiet before the
// changes seen so far are delivered.
//
// An editor's save is a short sequence (write a temporary file, rename it
// over the original, chmod) whose events land within a few milliseconds;
// `git checkout` or a formatter touching many files spans tens of
// milliseconds more. 100 ms coalesces both into one Batch while keeping the
// delay between a save and a visible reload well below what a person notices.
const DefaultDebounce = 100 * time.Millisecond

// maxWaitFactor bounds how long a continuous stream of events can postpone a
// Batch: at most this many debounce periods after the first pending change
// (1 s with DefaultDebounce), so a tool that never stops writing still
// produces batches instead of starving the consumer.
const maxWaitFactor = 10

// limitRetryInterval is how often the watches are retried after the inotify
// watch limit was hit. The limit is lifted by an administrator raising
// fs.inotify.max_user_watches or by other programs releasing watches, neither
// of which happens within milliseconds; a retry costs one walk of the trees
// (about 20 ms for 300 directories), so every 30 s is cheap and recovers soon
// enough.
const limitRetryInterval = 30 * time.Second

// maxQueued caps the events read from fsnotify but not yet handled. The
// queue only grows while the handling goroutine is busy (walking a new
// tree); past this size events are dropped and treated like a kernel queue
// overflow, which bounds memory the same way the kernel's own 16,384-event
// queue does.
const maxQueued = 1 << 16

// Options configure a Watcher.
type Options struct {
	// Roots are the absolute paths of the directories to watch recursively.
	// A root that does not exist yet is watched from the moment it appears,
	// and again after it is removed and recreated.
	Roots []string

	// Skip reports whether a path below a root must be ignored; for a
	// directory, nothing inside it is watched either. It adds to the
	// default skips, which always apply: .git and node_modules at any depth,
	// and sandbox, state and index directly inside any .omni directory
	// (files the server itself writes; watching them would make it reload
	// in a loop). A root itself is never skipped. For a path that was
	// removed, isDir is true only if it was a watched directory. Skip is
	// called from the Watcher's goroutine and must not block.
	Skip func(path string, isDir bool) bool

	// Debounce is the quiet period before a Batch is delivered;
	// 0 or less means DefaultDebounce.
	Debounce time.Duration

	// Logger receives warnings (events lost, watch limit reached) and
	// debug lines; nil discards them.
	Logger *slog.Logger
}

// Batch is one delivery of changes.
type Batch struct {
	// Paths are the absolute paths that changed, sorted and without
	// duplicates: files and directories, created, written, removed or
	// renamed (both the old and the new name). A directory that was removed
	// or renamed away stands for everything that was inside it.
	Paths []string

	// Rescan is true when changes may have been missed (the kernel's event
	// queue overflowed, or the inotify watch limit kept a directory from
	// being watched). Paths is then incomplete: treat everything under the
	// roots as changed.
	Rescan bool
}

// A Watcher watches directory trees and calls its callback with each Batch
// of changes. It must be closed with Close.
type Watcher struct {
	fsw      *fsnotify.Watcher
	onChange func(Batch)
	log      *slog.Logger
	skip     func(path string, isDir bool) bool
	debounce time.Duration
	maxWait  time.Duration

	// add starts watching one directory; it is fsw.Add except in tests that
	// simulate the watch limit.
	add func(dir string) error
	// retryDelay is limitRetryInterval except in tests.
	retryDelay time.Duration

	// The state below is owned by the loop goroutine (and by New before
	// the goroutines start): no lock.
	roots   []*root
	dirs    map[string]struct{} // directories watched as part of a tree
	anchors map[string]struct{} // ancestors watched while a root is missing
	pending map[string]struct{} // changed paths not yet handed to deliver
	rescan  bool                // the pending Batch must carry Rescan
	// degraded is set while the watch limit keeps some directory unwatched;
	// limitHit records whether the limit was hit since rescanAll began.
	degraded, limitHit bool
	changed            bool      // pending or rescan grew since the flush timer was last armed
	firstPending       time.Time // when pending became non-empty
	flushTimer         *time.Timer
	retryTimer         *time.Timer

	// queue hands events from read to loop without ever blocking read.
	qmu     sync.Mutex
	queue   []item
	qLost   bool          // events were dropped because queue was full
	qNotify chan struct{} // capacity 1: queue has items

	// ready hands batches from loop to deliver; changes merge here while
	// the callback runs.
	mu          sync.Mutex
	ready       map[string]struct{}
	readyRescan bool
	readyNotify chan struct{} // capacity 1: ready has something

	done      chan struct{}
	closeOnce sync.Once
	closeErr  error
	wg        sync.WaitGroup
}

// item is one thing fsnotify reported: an event or an error.
type item struct {
	ev  fsnotify.Event
	err error
}

// New watches the trees under opts.Roots and calls onChange with each Batch
// of changes. Changes made after New returns are reported; start the Watcher
// before reading the state it guards, so that nothing falls in between.
//
// onChange is called from a single goroutine, never concurrently with
// itself. It must not call Close, which waits for it to return.
func New(opts Options, onChange func(Batch)) (*Watcher, error) {
	w, err := newWatcher(opts, onChange)
	if err != nil {
		return nil, err
	}
	w.start()
	return w, nil
}

// newWatcher prepares a Watcher without watching anything yet, so that tests
// can replace add and retryDelay before start.
func newWatcher(opts Options, onChange func(Batch)) (*Watcher, error) {
	if onChange == nil {
		return nil, errors.New("watch: onChange is nil")
	}
	roots, err := checkRoots(opts.Roots)
	if err != nil {
		return nil, err
	}
	fsw, err := fsnotify.NewWatcher()
	if errors.Is(err, syscall.EMFILE) {
		return nil, fmt.Errorf("start file watcher: %w; raise fs.inotify.max_user_instances (sysctl) or the open-file limit (ulimit -n)", err)
	}
	if err != nil {
		return nil, fmt.Errorf("start file watcher: %w", err)
	}
	debounce := opts.Debounce
	if debounce <= 0 {
		debounce = DefaultDebounce
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	w := &Watcher{
		fsw:         fsw,
		onChange:    onChange,
		log:         log,
		skip:        opts.Skip,
		debounce:    debounce,
		maxWait:     maxWaitFactor * debounce,
		add:         fsw.Add,
		retryDelay:  limitRetryInterval,
		roots:       roots,
		dirs:        make(map[string]struct{}),
		anchors:     make(map[string]struct{}),
		pending:     make(map[string]struct{}),
		flushTimer:  stoppedTimer(),
		retryTimer:  stoppedTimer(),
		qNotify:     make(chan struct{}, 1),
		ready:       make(map[string]struct{}),
		readyNotify: make(chan struct{}, 1),
		done:        make(chan struct{}),
	}
	return w, nil
}

// checkRoots cleans and deduplicates roots. A root that exists must be a
// directory: a symbolic link or a file there is a configuration mistake that
// would otherwise leave the tree silently unwatched.
func checkRoots(paths []string) ([]*root, error) {
	if len(paths) == 0 {
		return nil, errors.New("watch: no roots to watch")
	}
	var roots []*root
	var errs []error
	seen := make(map[string]bool)
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			errs = append(errs, fmt.Errorf("watch root %q: not an absolute path", p))
			continue
		}
		p = filepath.Clean(p)
		if seen[p] {
			continue
		}
		seen[p] = true
		if fi, err := os.Lstat(p); err == nil && !fi.IsDir() {
			errs = append(errs, fmt.Errorf("watch root %s: not a directory (%s); pass the real directory", p, fi.Mode().Type()))
			continue
		}
		roots = append(roots, &root{path: p})
	}
	return roots, errors.Join(errs...)
}

func stoppedTimer() *time.Timer {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return t
}

// start watches the roots that exist and starts the goroutines. Nothing
// found now is reported: it is the state the consumer starts from.
func (w *Watcher) start() {
	w.resolveRoots(false)
	// Hitting the watch limit here asked for a rescan, but nothing has
	// changed yet; degraded alone makes every later Batch carry Rescan.
	w.rescan, w.changed = false, false
	w.wg.Add(3)
	go w.read()
	go w.loop()
	go w.deliver()
}

// Close stops watching. It waits for the Watcher's goroutines, including a
// running callback, to exit; once it returns, the callback is never called
// again. Changes not yet delivered are dropped. Close may be called more
// than once and from several goroutines, but not from the callback.
func (w *Watcher) Close() error {
	w.closeOnce.Do(func() {
		close(w.done)
		// read keeps draining fsnotify until fsw.Close has finished: fsnotify
		// can block sending an error while it holds the lock that both Close
		// and Add need, so its channels must be read until they are closed.
		w.closeErr = w.fsw.Close()
		w.wg.Wait()
	})
	return w.closeErr
}

func (w *Watcher) closing() bool {
	select {
	case <-w.done:
		return true
	default:
		return false
	}
}

// read moves everything fsnotify reports into queue. It never calls into
// fsnotify and never waits for loop, which does: see Close.
func (w *Watcher) read() {
	defer w.wg.Done()
	for {
		var it item
		var ok bool
		select {
		case it.ev, ok = <-w.fsw.Events:
		case it.err, ok = <-w.fsw.Errors:
		}
		if !ok {
			// fsnotify closes its channels only when closed itself.
			if !w.closing() {
				w.log.Error("file watcher stopped unexpectedly; changes are no longer seen")
			}
			return
		}
		w.qmu.Lock()
		if len(w.queue) < maxQueued {
			w.queue = append(w.queue, it)
		} else {
			w.qLost = true
		}
		w.qmu.Unlock()
		select {
		case w.qNotify <- struct{}{}:
		default:
		}
	}
}

// loop handles events and errors, keeps the watches in step with the trees,
// and decides when the pending changes become a Batch.
func (w *Watcher) loop() {
	defer w.wg.Done()
	defer w.flushTimer.Stop()
	defer w.retryTimer.Stop()
	var spare []item
	for {
		select {
		case <-w.done:
			return
		case <-w.qNotify:
			w.qmu.Lock()
			items, lost := w.queue, w.qLost
			w.queue, w.qLost = spare[:0], false
			w.qmu.Unlock()
			if lost {
				w.handleError(fmt.Errorf("more than %d events waiting: %w", maxQueued, fsnotify.ErrEventOverflow))
			}
			for i, it := range items {
				if w.closing() {
					return
				}
				if it.err != nil {
					w.handleError(it.err)
				} else {
					w.handleEvent(it.ev)
				}
				items[i] = item{} // let the strings go
			}
			spare = items
		case <-w.flushTimer.C:
			w.flush()
		case <-w.retryTimer.C:
			w.rescanAll()
		}
		if w.changed {
			w.changed = false
			w.schedule()
		}
	}
}

// handleError reacts to an error fsnotify reported. An overflow means events
// were lost: watch everything again and make the consumer rescan.
func (w *Watcher) handleError(err error) {
	if !errors.Is(err, fsnotify.ErrEventOverflow) {
		w.log.Warn("file watcher error", "err", err)
		return
	}
	w.log.Warn("file events were lost; watching all directories again and asking for a full rescan",
		"err", err, "hint", "raise fs.inotify.max_queued_events if this happens often")
	w.rescanAll()
	w.markRescan()
}

// note records path as changed.
func (w *Watcher) note(path string) {
	w.pending[path] = struct{}{}
	w.changed = true
}

// markRescan makes the next Batch carry Rescan.
func (w *Watcher) markRescan() {
	w.rescan = true
	w.changed = true
}

// schedule (re)arms the flush timer after a change: the Batch goes out once
// the file system has been quiet for debounce, but no later than maxWait
// after its first change.
func (w *Watcher) schedule() {
	now := time.Now()
	if w.firstPending.IsZero() {
		w.firstPending = now
	}
	w.flushTimer.Reset(min(w.debounce, w.firstPending.Add(w.maxWait).Sub(now)))
}

// flush hands the pending changes to deliver.
func (w *Watcher) flush() {
	w.firstPending = time.Time{}
	if len(w.pending) == 0 && !w.rescan {
		return
	}
	w.mu.Lock()
	maps.Copy(w.ready, w.pending)
	// While the watch limit keeps a directory unwatched, no list of paths
	// can be trusted to be complete.
	w.readyRescan = w.readyRescan || w.rescan || w.degraded
	w.mu.Unlock()
	clear(w.pending)
	w.rescan = false
	select {
	case w.readyNotify <- struct{}{}:
	default:
	}
}

// deliver calls onChange with what is ready, one Batch at a time.
func (w *Watcher) deliver() {
	defer w.wg.Done()
	for {
		select {
		case <-w.done:
			return
		case <-w.readyNotify:
		}
		w.mu.Lock()
		b := Batch{Paths: slices.Sorted(maps.Keys(w.ready)), Rescan: w.readyRescan}
		clear(w.ready)
		w.readyRescan = false
		w.mu.Unlock()
		// Both cases of the select above may have been ready; Close must win.
		if w.closing() || (len(b.Paths) == 0 && !b.Rescan) {
			continue
		}
		w.log.Debug("files changed", "paths", len(b.Paths), "rescan", b.Rescan)
		w.onChange(b)
	}
}
