package watch

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/omnidev/omnidev/internal/testrepo"
)

// waitTimeout bounds every wait for a Batch. It is only reached when a test
// fails; it is generous because -race on two cores can be slow.
const waitTimeout = 10 * time.Second

// recorder collects the batches a Watcher delivers.
type recorder struct {
	mu      sync.Mutex
	batches []Batch
	notify  chan struct{} // capacity 1: a batch arrived
}

func newRecorder() *recorder { return &recorder{notify: make(chan struct{}, 1)} }

func (r *recorder) onChange(b Batch) {
	r.mu.Lock()
	r.batches = append(r.batches, b)
	r.mu.Unlock()
	select {
	case r.notify <- struct{}{}:
	default:
	}
}

// snapshot returns the batches delivered so far.
func (r *recorder) snapshot() []Batch {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.batches)
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.batches)
}

// waitUntil waits until ok holds for the batches delivered after the first
// `from`, and fails the test after waitTimeout.
func (r *recorder) waitUntil(t *testing.T, from int, what string, ok func([]Batch) bool) {
	t.Helper()
	deadline := time.After(waitTimeout)
	for {
		if bs := r.snapshot(); ok(bs[from:]) {
			return
		}
		select {
		case <-r.notify:
		case <-deadline:
			t.Fatalf("no %s within %v; batches since: %v", what, waitTimeout, r.snapshot()[from:])
		}
	}
}

// waitPaths waits until every path in want was reported after the first
// `from` batches.
func (r *recorder) waitPaths(t *testing.T, from int, want ...string) {
	t.Helper()
	r.waitUntil(t, from, fmt.Sprintf("report of %q", want), func(bs []Batch) bool {
		seen := reported(bs)
		for _, p := range want {
			if !seen[p] {
				return false
			}
		}
		return true
	})
}

func reported(bs []Batch) map[string]bool {
	seen := make(map[string]bool)
	for _, b := range bs {
		for _, p := range b.Paths {
			seen[p] = true
		}
	}
	return seen
}

func testLogger(buf *testrepo.Buffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// startWatcher starts a Watcher that is closed when the test ends.
func startWatcher(t *testing.T, opts Options, onChange func(Batch)) *Watcher {
	t.Helper()
	w, err := New(opts, onChange)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		if err := w.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return w
}

// An action changes files under dir, the test's temporary directory.
type action func(t *testing.T, dir string)

func write(rel string) action {
	return func(t *testing.T, dir string) {
		t.Helper()
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(rel+time.Now().String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func mkdirAll(rel string) action {
	return func(t *testing.T, dir string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(dir, rel), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func removeAll(rel string) action {
	return func(t *testing.T, dir string) {
		t.Helper()
		if err := os.RemoveAll(filepath.Join(dir, rel)); err != nil {
			t.Fatal(err)
		}
	}
}

func rename(from, to string) action {
	return func(t *testing.T, dir string) {
		t.Helper()
		if err := os.Rename(filepath.Join(dir, from), filepath.Join(dir, to)); err != nil {
			t.Fatal(err)
		}
	}
}

func seq(actions ...action) action {
	return func(t *testing.T, dir string) {
		t.Helper()
		for _, a := range actions {
			a(t, dir)
		}
	}
}

func abs(dir string, rels []string) []string {
	out := make([]string, len(rels))
	for i, rel := range rels {
		out[i] = filepath.Join(dir, rel)
	}
	return out
}

func TestChanges(t *testing.T) {
	type step struct {
		do   action
		want []string // reported after do, relative to the test directory
	}
	tests := []struct {
		name  string
		roots []string // relative; nil means the test directory itself
		skip  func(path string, isDir bool) bool
		setup action // before the Watcher starts
		steps []step
		// never lists paths that, with everything below them, must not be
		// reported by the end of the test.
		never []string
	}{
		{
			name:  "create file",
			steps: []step{{do: write("a.txt"), want: []string{"a.txt"}}},
		},
		{
			name:  "edit file",
			setup: write("a.txt"),
			steps: []step{{do: write("a.txt"), want: []string{"a.txt"}}},
		},
		{
			name:  "remove file",
			setup: write("a.txt"),
			steps: []step{{do: removeAll("a.txt"), want: []string{"a.txt"}}},
		},
		{
			name:  "edit three folders deep",
			setup: write("x/y/z/f.md"),
			steps: []step{{do: write("x/y/z/f.md"), want: []string{"x/y/z/f.md"}}},
		},
		{
			// The file is written before the new directories can have
			// watches: only the rescan after adding them finds it.
			name:  "directories created and written at once",
			steps: []step{{do: seq(mkdirAll("a/b/c"), write("a/b/c/f")), want: []string{"a", "a/b", "a/b/c", "a/b/c/f"}}},
		},
		{
			name:  "rename-save of the config",
			roots: []string{"omni"},
			setup: write("omni/config.toml"),
			steps: []step{
				{do: seq(write("omni/config.toml.tmp"), rename("omni/config.toml.tmp", "omni/config.toml")), want: []string{"omni/config.toml"}},
				// The replaced file is still seen, through its folder.
				{do: seq(write("omni/config.toml.tmp"), rename("omni/config.toml.tmp", "omni/config.toml")), want: []string{"omni/config.toml"}},
			},
		},
		{
			name:  "remove a whole directory",
			setup: seq(write("d/e/f1"), write("d/f2")),
			steps: []step{
				{do: removeAll("d"), want: []string{"d", "d/e", "d/e/f1", "d/f2"}},
				{do: write("d/e/g"), want: []string{"d", "d/e", "d/e/g"}},
			},
		},
		{
			name:  "directory renamed within the tree",
			setup: write("old/sub/f"),
			steps: []step{
				{do: rename("old", "new"), want: []string{"old", "new", "new/sub", "new/sub/f"}},
				{do: write("new/sub/g"), want: []string{"new/sub/g"}},
			},
			// inotify would keep reporting the moved subdirectory under its
			// old name if its watch were not dropped.
			never: []string{"old/sub/g"},
		},
		{
			name:  "directory renamed out of the tree",
			roots: []string{"in"},
			setup: seq(write("in/sub/inner/f"), mkdirAll("out")),
			steps: []step{
				{do: rename("in/sub", "out/sub"), want: []string{"in/sub"}},
				{do: write("out/sub/inner/g")},
			},
			never: []string{"out", "in/sub/inner/g"},
		},
		{
			name:  "root created after start",
			roots: []string{".omni"},
			steps: []step{{do: seq(mkdirAll(".omni"), write(".omni/active-profile")), want: []string{".omni", ".omni/active-profile"}}},
		},
		{
			name:  "root several missing folders down",
			roots: []string{"a/b/c"},
			steps: []step{
				{do: write("a/x")}, // beside the way to the root
				{do: seq(mkdirAll("a/b/c"), write("a/b/c/f")), want: []string{"a/b/c", "a/b/c/f"}},
			},
			never: []string{"a/x"},
		},
		{
			name:  "root removed and created again",
			roots: []string{".omni"},
			setup: write(".omni/.env"),
			steps: []step{
				{do: removeAll(".omni"), want: []string{".omni", ".omni/.env"}},
				{do: write("sibling")}, // seen by the parent, but not under a root
				{do: write(".omni/.env"), want: []string{".omni", ".omni/.env"}},
			},
			never: []string{"sibling"},
		},
		{
			name:  "root renamed away and back",
			roots: []string{".omni"},
			setup: write(".omni/.env"),
			steps: []step{
				{do: rename(".omni", ".omni-old"), want: []string{".omni"}},
				{do: write(".omni-old/ignored")},
				{do: rename(".omni-old", ".omni"), want: []string{".omni", ".omni/.env", ".omni/ignored"}},
				{do: write(".omni/.env"), want: []string{".omni/.env"}},
			},
			never: []string{".omni-old"},
		},
		{
			name:  "skipped directories",
			roots: []string{"omni", ".omni"},
			skip: func(path string, isDir bool) bool {
				return isDir && filepath.Base(path) == "build"
			},
			setup: seq(
				write("omni/.git/HEAD"),
				write("omni/capabilities/x/node_modules/p/index.js"),
				write(".omni/sandbox/main.ts"),
				write(".omni/state/tasks.json"),
				write("omni/build/out.js"),
			),
			steps: []step{{
				do: seq(
					write("omni/.git/HEAD"),
					write("omni/capabilities/x/node_modules/p/index.js"),
					write(".omni/sandbox/main.ts"),
					write(".omni/state/tasks.json"),
					write("omni/build/out.js"),
					write("omni/capabilities/y/node_modules/q/index.js"),
					write("omni/capabilities/y/.git/HEAD"),
					write(".omni/index/store/segment"),
					write("omni/capabilities/y/build/out.js"),
					write(".omni/config.local.toml"),
				),
				want: []string{"omni/capabilities/y", ".omni/config.local.toml"},
			}},
			never: []string{
				"omni/.git", "omni/capabilities/x/node_modules", ".omni/sandbox", ".omni/state", "omni/build",
				"omni/capabilities/y/node_modules", "omni/capabilities/y/.git", ".omni/index", "omni/capabilities/y/build",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if tt.setup != nil {
				tt.setup(t, dir)
			}
			roots := tt.roots
			if roots == nil {
				roots = []string{"."}
			}
			rec := newRecorder()
			startWatcher(t, Options{Roots: abs(dir, roots), Skip: tt.skip}, rec.onChange)

			for _, s := range tt.steps {
				from := rec.count()
				s.do(t, dir)
				if len(s.want) > 0 {
					rec.waitPaths(t, from, abs(dir, s.want)...)
				}
			}
			// Events are handled in order, so once a later change is
			// reported, anything the steps wrongly reported is too.
			sentinel := filepath.Join(roots[0], "zz-sentinel")
			write(sentinel)(t, dir)
			rec.waitPaths(t, 0, filepath.Join(dir, sentinel))

			for _, b := range rec.snapshot() {
				for _, p := range b.Paths {
					for _, n := range abs(dir, tt.never) {
						if p == n || isUnder(p, n) {
							t.Errorf("reported %s; nothing under %s may be", p, n)
						}
					}
				}
				if !slices.IsSorted(b.Paths) || len(slices.Compact(slices.Clone(b.Paths))) != len(b.Paths) {
					t.Errorf("paths not sorted and unique: %q", b.Paths)
				}
				if b.Rescan {
					t.Errorf("unexpected Rescan: %v", b)
				}
			}
		})
	}
}

func TestBurstIsCoalesced(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rec := newRecorder()
	startWatcher(t, Options{Roots: []string{dir}}, rec.onChange)

	var want []string
	for i := range 100 {
		rel := fmt.Sprintf("f%03d.txt", i)
		write(rel)(t, dir)
		want = append(want, filepath.Join(dir, rel))
	}
	rec.waitPaths(t, 0, want...)
	if n := rec.count(); n >= 10 {
		t.Errorf("100 writes came in %d batches, want fewer than 10", n)
	}
}

// A slow callback holds up neither the events nor their handling: what
// happens meanwhile is delivered, all of it, in the next Batch.
func TestSlowCallbackKeepsChanges(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rec := newRecorder()
	entered, release := make(chan struct{}), make(chan struct{})
	var calls, inFlight atomic.Int32
	onChange := func(b Batch) {
		if inFlight.Add(1) != 1 {
			t.Error("onChange called concurrently with itself")
		}
		defer inFlight.Add(-1)
		if calls.Add(1) == 1 {
			close(entered)
			<-release
		}
		rec.onChange(b)
	}
	w := startWatcher(t, Options{Roots: []string{dir}, Debounce: 10 * time.Millisecond}, onChange)

	write("first")(t, dir)
	select {
	case <-entered:
	case <-time.After(waitTimeout):
		t.Fatal("no first batch")
	}
	later := []string{"a", "b", "c"}
	for _, rel := range later {
		write(rel)(t, dir)
	}
	// Wait until they were handled and handed over while the callback is
	// still blocked.
	handedOver := func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		for _, p := range abs(dir, later) {
			if _, ok := w.ready[p]; !ok {
				return false
			}
		}
		return true
	}
	deadline := time.Now().Add(waitTimeout)
	for !handedOver() {
		if time.Now().After(deadline) {
			t.Fatal("changes not handed over while the callback was blocked")
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(release)

	rec.waitUntil(t, 0, "second batch", func(bs []Batch) bool { return len(bs) >= 2 })
	if got := rec.snapshot()[1].Paths; !isSubset(abs(dir, later), got) {
		t.Errorf("batch after the slow call = %q, want all of %q", got, later)
	}
}

func isSubset(sub, set []string) bool {
	for _, p := range sub {
		if !slices.Contains(set, p) {
			return false
		}
	}
	return true
}

func TestCloseWaitsForCallback(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	entered, release := make(chan struct{}), make(chan struct{})
	var calls atomic.Int32
	var closed atomic.Bool
	onChange := func(Batch) {
		if closed.Load() {
			t.Error("onChange called after Close returned")
		}
		if calls.Add(1) == 1 {
			close(entered)
			<-release
		}
	}
	const debounce = 10 * time.Millisecond
	w, err := New(Options{Roots: []string{dir}, Debounce: debounce}, onChange)
	if err != nil {
		t.Fatal(err)
	}
	write("a")(t, dir)
	select {
	case <-entered:
	case <-time.After(waitTimeout):
		t.Fatal("no batch")
	}

	closeErr := make(chan error, 1)
	go func() { closeErr <- w.Close() }()
	// A negative check can only be bounded; a short window suffices for
	// a Close that forgot to wait.
	select {
	case <-closeErr:
		t.Fatal("Close returned while onChange was running")
	case <-time.After(50 * time.Millisecond):
	}
	write("b")(t, dir) // pending while Close runs: must be dropped
	close(release)
	select {
	case err := <-closeErr:
		if err != nil {
			t.Fatalf("Close: %v", err)
		}
	case <-time.After(waitTimeout):
		t.Fatal("Close did not return after onChange did")
	}
	closed.Store(true)

	write("c")(t, dir)
	time.Sleep(5 * debounce)
	if n := calls.Load(); n != 1 {
		t.Errorf("onChange called %d times, want 1", n)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// Not parallel: it counts the process's goroutines.
func TestCloseStopsGoroutines(t *testing.T) {
	dir := t.TempDir()
	before := runtime.NumGoroutine()
	rec := newRecorder()
	w, err := New(Options{Roots: []string{dir, filepath.Join(dir, "missing")}}, rec.onChange)
	if err != nil {
		t.Fatal(err)
	}
	write("a")(t, dir)
	rec.waitPaths(t, 0, filepath.Join(dir, "a"))
	var wg sync.WaitGroup
	for range 3 { // concurrent Close calls all wait and agree
		wg.Go(func() {
			if err := w.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
	}
	wg.Wait()
	deadline := time.Now().Add(waitTimeout)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines after Close, %d before:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestOverflowRescans(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mkdirAll("sub")(t, dir)
	var logs testrepo.Buffer
	rec := newRecorder()
	w := startWatcher(t, Options{Roots: []string{dir}, Logger: testLogger(&logs)}, rec.onChange)

	// Lose a watch the way a flood of lost events would, then report the
	// overflow through fsnotify's own error channel.
	if err := w.fsw.Remove(filepath.Join(dir, "sub")); err != nil {
		t.Fatal(err)
	}
	w.fsw.Errors <- fsnotify.ErrEventOverflow

	rec.waitUntil(t, 0, "Batch with Rescan", func(bs []Batch) bool {
		return slices.ContainsFunc(bs, func(b Batch) bool { return b.Rescan })
	})
	if !strings.Contains(logs.String(), "level=WARN msg=\"file events were lost") {
		t.Errorf("no warning logged; log:\n%s", logs.String())
	}
	from := rec.count()
	write("sub/f")(t, dir)
	rec.waitPaths(t, from, filepath.Join(dir, "sub/f"))
}

func TestWatchLimit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var logs testrepo.Buffer
	rec := newRecorder()
	w, err := newWatcher(Options{Roots: []string{dir}, Debounce: 10 * time.Millisecond, Logger: testLogger(&logs)}, rec.onChange)
	if err != nil {
		t.Fatal(err)
	}
	var limited atomic.Bool
	w.add = func(d string) error {
		if limited.Load() && filepath.Base(d) == "new" {
			return fmt.Errorf("add watch: %w", syscall.ENOSPC)
		}
		return w.fsw.Add(d)
	}
	w.retryDelay = 20 * time.Millisecond
	w.start()
	t.Cleanup(func() { w.Close() })

	limited.Store(true)
	mkdirAll("new")(t, dir)
	rec.waitUntil(t, 0, "Batch with Rescan for the unwatched directory", func(bs []Batch) bool {
		return slices.ContainsFunc(bs, func(b Batch) bool {
			return b.Rescan && slices.Contains(b.Paths, filepath.Join(dir, "new"))
		})
	})
	if !strings.Contains(logs.String(), "level=WARN msg=\"inotify watch limit reached") {
		t.Errorf("no warning logged; log:\n%s", logs.String())
	}

	from := rec.count()
	limited.Store(false)
	rec.waitUntil(t, from, "Batch with Rescan after the retry", func(bs []Batch) bool {
		return slices.ContainsFunc(bs, func(b Batch) bool { return b.Rescan })
	})
	if !strings.Contains(logs.String(), "all directories are watched again") {
		t.Errorf("recovery not logged; log:\n%s", logs.String())
	}

	from = rec.count()
	write("new/f")(t, dir)
	rec.waitUntil(t, from, "exact Batch for new/f", func(bs []Batch) bool {
		return slices.ContainsFunc(bs, func(b Batch) bool {
			return !b.Rescan && slices.Contains(b.Paths, filepath.Join(dir, "new/f"))
		})
	})
}

func TestNewRejectsBadRoots(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write("file")(t, dir)
	if err := os.Symlink(dir, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		roots []string
		want  string
	}{
		{"no roots", nil, "no roots"},
		{"relative", []string{"omni"}, "not an absolute path"},
		{"file", []string{filepath.Join(dir, "file")}, "not a directory"},
		{"symbolic link", []string{filepath.Join(dir, "link")}, "not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := New(Options{Roots: tt.roots}, func(Batch) {})
			if err == nil {
				w.Close()
				t.Fatalf("New(%q) succeeded, want an error containing %q", tt.roots, tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New(%q) = %v, want an error containing %q", tt.roots, err, tt.want)
			}
		})
	}
}
