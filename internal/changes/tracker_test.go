//go:build linux

package changes

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/omnidev/omnidev/internal/testrepo"
)

// trackRun measures ops as one run through a tracker: prepare (the
// baseline brought up to date), ops, report. It fails the test on error.
func trackRun(t *testing.T, k *tracker, root string, ops []fsOp) []Change {
	t.Helper()
	if _, err := k.prepare(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, op := range ops {
		op(t, root)
	}
	got, err := k.report(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func sameChanges(got, want []Change) bool {
	return len(got) == 0 && len(want) == 0 || reflect.DeepEqual(withoutPrior(got), want)
}

// TestTrackerChanges runs every case of TestChanges through a tracker, with
// the edits made before the run either before the tracker starts (the
// baseline's first walk sees them) or between two runs (events tell the
// baseline): either way they are never the run's. A third run that changes
// nothing reports nothing: a run's changes are not reported twice.
func TestTrackerChanges(t *testing.T) {
	for _, tt := range changeCases() {
		for _, between := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/between=%v", tt.name, between), func(t *testing.T) {
				t.Parallel()
				root := tt.newRoot(t)
				k := newTracker(root, slog.New(slog.DiscardHandler), nil)
				defer k.close()
				if between {
					if got := trackRun(t, k, root, nil); len(got) > 0 {
						t.Fatalf("a run that did nothing reported %+v", got)
					}
				}
				for _, op := range tt.before {
					op(t, root)
				}
				if got := trackRun(t, k, root, tt.run); !sameChanges(got, tt.want) {
					t.Errorf("changes:\n got %+v\nwant %+v", got, tt.want)
				}
				if got := trackRun(t, k, root, nil); len(got) > 0 {
					t.Errorf("the next run, which did nothing, reported %+v", got)
				}
			})
		}
	}
}

func mkdir(rel string) fsOp {
	return func(t *testing.T, root string) {
		if err := os.MkdirAll(filepath.Join(root, rel), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func removeAll(rel string) fsOp {
	return func(t *testing.T, root string) {
		if err := os.RemoveAll(filepath.Join(root, rel)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTrackerFolders covers what only events of folders tell: folders
// created, renamed, removed or replaced during the run, and a worktree
// switched under the tracker between runs (git checkout, git stash). fast
// cases must be told by events alone, without a walk after the first.
func TestTrackerFolders(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string
		between []fsOp // made by someone else before the run
		run     []fsOp
		want    []Change
		fast    bool
	}{
		{
			name: "new nested folders",
			run:  []fsOp{write("a/b/c/new.txt", "1\n2\n"), write("a/top.txt", "t\n")},
			want: []Change{
				{Path: "a/b/c/new.txt", Status: StatusAdded, Insertions: 2},
				{Path: "a/top.txt", Status: StatusAdded, Insertions: 1},
			},
			fast: true,
		},
		{
			name:  "folder renamed",
			files: map[string]string{"src/a.txt": "a\n", "src/deep/b.txt": "b\n", "keep.txt": "k\n"},
			run:   []fsOp{rename("src", "lib"), write("lib/deep/c.txt", "c\n")},
			want: []Change{
				{Path: "lib/a.txt", Status: StatusAdded, Insertions: 1},
				{Path: "lib/deep/b.txt", Status: StatusAdded, Insertions: 1},
				{Path: "lib/deep/c.txt", Status: StatusAdded, Insertions: 1},
				{Path: "src/a.txt", Status: StatusDeleted, Deletions: 1},
				{Path: "src/deep/b.txt", Status: StatusDeleted, Deletions: 1},
			},
			fast: true,
		},
		{
			name:  "folder removed and created again",
			files: map[string]string{"d/a.txt": "a\n", "d/e/b.txt": "b\n"},
			run:   []fsOp{removeAll("d"), write("d/a.txt", "a\n"), write("d/e/new.txt", "n\n")},
			want: []Change{
				{Path: "d/e/b.txt", Status: StatusDeleted, Deletions: 1},
				{Path: "d/e/new.txt", Status: StatusAdded, Insertions: 1},
			},
			fast: true,
		},
		{
			name:  "file replaced by a folder",
			files: map[string]string{"x": "file\n"},
			run:   []fsOp{remove("x"), write("x/inside.txt", "i\n")},
			want: []Change{
				{Path: "x", Status: StatusDeleted, Deletions: 1},
				{Path: "x/inside.txt", Status: StatusAdded, Insertions: 1},
			},
			fast: true,
		},
		{
			name:  "ignored folder created and written",
			files: map[string]string{".gitignore": "dist/\n*.tmp\n"},
			run:   []fsOp{write("dist/a/b.js", "x\n"), write("scratch.tmp", "t\n"), write("ok.txt", "o\n")},
			want:  []Change{{Path: "ok.txt", Status: StatusAdded, Insertions: 1}},
			fast:  true,
		},
		{
			name:    "folder moved in from outside the tree between runs",
			between: []fsOp{write(".omni/tmp/x/a.txt", "a\n"), rename(".omni/tmp/x", "moved")},
			run:     []fsOp{appendTo("moved/a.txt", "b\n")},
			want:    []Change{{Path: "moved/a.txt", Status: StatusModified, Insertions: 1}},
			fast:    true,
		},
		{
			name:  "git checkout of another branch between runs",
			files: map[string]string{"a.txt": "main\n", "both.txt": "1\n", "sub/m.txt": "m\n"},
			between: []fsOp{
				gitCmd("checkout", "-q", "-b", "other"),
				write("a.txt", "other\n"), remove("sub/m.txt"), write("only-other/o.txt", "o\n"),
				gitCmd("add", "-A"), gitCmd("commit", "-q", "-m", "other"),
				gitCmd("checkout", "-q", "main"),
				gitCmd("checkout", "-q", "other"),
			},
			run: []fsOp{appendTo("only-other/o.txt", "o2\n"), appendTo("both.txt", "2\n")},
			want: []Change{
				{Path: "both.txt", Status: StatusModified, Insertions: 1},
				{Path: "only-other/o.txt", Status: StatusModified, Insertions: 1},
			},
			fast: true,
		},
		{
			name:    "git stash between runs",
			files:   map[string]string{"a.txt": "1\n"},
			between: []fsOp{appendTo("a.txt", "dirty\n"), write("b.txt", "b\n"), gitCmd("add", "b.txt"), gitCmd("stash", "-q")},
			run:     []fsOp{appendTo("a.txt", "2\n")},
			want:    []Change{{Path: "a.txt", Status: StatusModified, Insertions: 1}},
			fast:    true,
		},
		{
			name:    "git stash pop between runs",
			files:   map[string]string{"a.txt": "1\n"},
			between: []fsOp{appendTo("a.txt", "dirty\n"), gitCmd("stash", "-q"), gitCmd("stash", "pop", "-q")},
			run:     []fsOp{appendTo("a.txt", "2\n")},
			want:    []Change{{Path: "a.txt", Status: StatusModified, Insertions: 1}},
			fast:    true,
		},
		{
			name:  "git checkout, clean and status between runs",
			files: map[string]string{"a.txt": "1\n", "src/b.txt": "b\n"},
			between: []fsOp{
				appendTo("a.txt", "editor\n"), write("src/new.txt", "n\n"), mkdir("tmp/deep"), write("tmp/deep/x.txt", "x\n"),
				gitCmd("checkout", "-q", "--", "."), gitCmd("clean", "-fdq"), gitCmd("status", "--porcelain"),
			},
			run:  []fsOp{appendTo("a.txt", "2\n"), write("src/new.txt", "n2\n")},
			want: []Change{{Path: "a.txt", Status: StatusModified, Insertions: 1}, {Path: "src/new.txt", Status: StatusAdded, Insertions: 1}},
			fast: true,
		},
		{
			name:    "an edited file added to the index between runs",
			files:   map[string]string{"a.txt": "1\n", "b.txt": "b\n"},
			between: []fsOp{appendTo("a.txt", "editor\n"), gitCmd("add", "a.txt")},
			run:     []fsOp{appendTo("a.txt", "2\n")},
			want:    []Change{{Path: "a.txt", Status: StatusModified, Insertions: 1}},
			fast:    true,
		},
		{
			name:    "a file renamed in the index between runs",
			files:   map[string]string{"a.txt": "1\n", "z.txt": "z\n"},
			between: []fsOp{gitCmd("mv", "a.txt", "b.txt"), gitCmd("rm", "-q", "--cached", "z.txt")},
			run:     []fsOp{appendTo("b.txt", "2\n"), appendTo("z.txt", "2\n")},
			want:    []Change{{Path: "b.txt", Status: StatusModified, Insertions: 1}, {Path: "z.txt", Status: StatusModified, Insertions: 1}},
			fast:    true,
		},
		{
			name:  "the index split between runs",
			files: map[string]string{".gitignore": "build/\n", "a.txt": "1\n", "c.txt": "c\n"},
			between: []fsOp{
				write("build/out.txt", "o\n"), gitCmd("add", "-f", "build/out.txt"), gitCmd("update-index", "--split-index"),
				appendTo("c.txt", "editor\n"), gitCmd("add", "c.txt"), gitCmd("status", "--porcelain"),
			},
			run: []fsOp{appendTo("build/out.txt", "2\n"), appendTo("c.txt", "2\n"), write("build/other.txt", "x\n")},
			want: []Change{
				{Path: "build/out.txt", Status: StatusModified, Insertions: 1},
				{Path: "c.txt", Status: StatusModified, Insertions: 1},
			},
		},
		{
			name:    "a .gitignore edited between runs",
			files:   map[string]string{".gitignore": "*.log\n"},
			between: []fsOp{write("x.log", "l\n"), write(".gitignore", "*.tmp\n")},
			run:     []fsOp{appendTo("x.log", "m\n"), write("y.tmp", "t\n")},
			want:    []Change{{Path: "x.log", Status: StatusModified, Insertions: 1}},
		},
		{
			name:    "a file force-added in an ignored folder between runs",
			files:   map[string]string{".gitignore": "build/\n"},
			between: []fsOp{write("build/keep.txt", "k\n"), gitCmd("add", "-f", "build/keep.txt")},
			run:     []fsOp{appendTo("build/keep.txt", "k\n"), write("build/other.txt", "o\n")},
			want:    []Change{{Path: "build/keep.txt", Status: StatusModified, Insertions: 1}},
		},
		{
			name: "a nested repository created during the run",
			run:  []fsOp{mkdir("vendor/lib"), write("vendor/lib/.git/HEAD", "ref: refs/heads/main\n"), write("vendor/lib/a.txt", "a\n")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := testrepo.New(t, tt.files)
			k := newTracker(root, slog.New(slog.DiscardHandler), nil)
			defer k.close()
			trackRun(t, k, root, nil)
			for _, op := range tt.between {
				op(t, root)
			}
			if got := trackRun(t, k, root, tt.run); !sameChanges(got, tt.want) {
				t.Errorf("changes:\n got %+v\nwant %+v", got, tt.want)
			}
			if tt.fast && k.walks != 1 {
				t.Errorf("%d walks of the worktree, want only the first", k.walks)
			}
			if got := trackRun(t, k, root, nil); len(got) > 0 {
				t.Errorf("the next run, which did nothing, reported %+v", got)
			}
		})
	}
}

// debugLogger logs everything to b.
func debugLogger(b *testrepo.Buffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// record measures ops as one run through r: Before, ops, Changes. It
// fails the test on error.
func record(t *testing.T, r *Recorder, root string, ops ...fsOp) []Change {
	t.Helper()
	m, err := r.Before(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range ops {
		op(t, root)
	}
	got, err := m.Changes(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func wantChanges(t *testing.T, got, want []Change) {
	t.Helper()
	if !sameChanges(got, want) {
		t.Errorf("changes:\n got %+v\nwant %+v", got, want)
	}
}

// TestRecorderTracksBetweenRuns: the first run walks and starts building
// the baseline in the background; from the second run on the tracker
// keeps it; what others change between runs (an editor, git) is never the
// next run's; a file changed and changed back is not reported; a rename
// is a deletion and an addition; and the steady runs walk nothing.
func TestRecorderTracksBetweenRuns(t *testing.T) {
	root := testrepo.New(t, map[string]string{"a.txt": "1\n", "b.txt": lines(3), "c.txt": "c\n"})
	var log testrepo.Buffer
	r := NewRecorder(root, debugLogger(&log))
	defer r.Close()
	wantChanges(t, record(t, r, root, appendTo("a.txt", "2\n")),
		[]Change{{Path: "a.txt", Status: StatusModified, Insertions: 1}})
	if r.build == nil {
		t.Fatal("the first run did not start building the baseline")
	}
	wantChanges(t, record(t, r, root, appendTo("a.txt", "3\n")),
		[]Change{{Path: "a.txt", Status: StatusModified, Insertions: 1}})
	if r.tracker == nil {
		t.Fatal("the second run did not use a tracker")
	}

	// Someone else, between runs.
	appendTo("a.txt", "editor\n")(t, root)
	write("notes.txt", "n\n")(t, root)
	testrepo.Git(t, root, "add", "-A")
	testrepo.Git(t, root, "commit", "-q", "-m", "between")
	testrepo.Git(t, root, "checkout", "-q", "-b", "topic")
	write("topic.txt", "t\n")(t, root)
	testrepo.Git(t, root, "add", "topic.txt")
	testrepo.Git(t, root, "commit", "-q", "-m", "topic")
	appendTo("c.txt", "stashed\n")(t, root)
	testrepo.Git(t, root, "stash", "-q")

	changedBack := func(t *testing.T, root string) {
		c, err := os.ReadFile(filepath.Join(root, "c.txt"))
		if err != nil {
			t.Fatal(err)
		}
		write("c.txt", "something else\n")(t, root)
		write("c.txt", string(c))(t, root)
	}
	wantChanges(t, record(t, r, root, changedBack, rename("b.txt", "b2.txt"), appendTo("topic.txt", "u\n")), []Change{
		{Path: "b.txt", Status: StatusDeleted, Deletions: 3},
		{Path: "b2.txt", Status: StatusAdded, Insertions: 3},
		{Path: "topic.txt", Status: StatusModified, Insertions: 1},
	})
	if r.tracker == nil || r.tracker.walks != 1 {
		t.Errorf("the tracker walked the worktree again:\n%s", log.String())
	}
}

// TestRecorderOverflow: a run that creates 20,000 files overflows the
// kernel's event queue (16,384 by default); the report falls back to a
// full walk and stays exact, the baseline is rebuilt in the background,
// and the next run is exact again.
func TestRecorderOverflow(t *testing.T) {
	const n = 20_000
	// gen/ exists and is watched: the files the run creates there raise
	// events (those of a folder the run creates are found by a scan).
	root := testrepo.New(t, map[string]string{"a.txt": "1\n", "gen/keep.txt": "k\n"})
	var log testrepo.Buffer
	r := NewRecorder(root, debugLogger(&log))
	defer r.Close()
	record(t, r, root)
	record(t, r, root)
	many := func(t *testing.T, root string) {
		for i := range n {
			if err := os.WriteFile(filepath.Join(root, "gen", fmt.Sprintf("f%d.txt", i)), []byte("x\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	got := record(t, r, root, many)
	if len(got) != n {
		t.Fatalf("%d changes, want %d", len(got), n)
	}
	for _, c := range got {
		if c.Status != StatusAdded || c.Insertions != 1 || !strings.HasPrefix(c.Path, "gen/") {
			t.Fatalf("unexpected change %+v", c)
		}
	}
	if !strings.Contains(log.String(), "verifying the whole worktree") {
		t.Errorf("the log does not say the report fell back to a walk:\n%s", log.String())
	}
	if r.build == nil {
		t.Error("the baseline is not being rebuilt in the background after the fallback")
	}
	wantChanges(t, record(t, r, root, appendTo("a.txt", "2\n"), remove("gen/f7.txt")), []Change{
		{Path: "a.txt", Status: StatusModified, Insertions: 1},
		{Path: "gen/f7.txt", Status: StatusDeleted, Deletions: 1},
	})
}

// TestRecorderWatchLimit: when inotify refuses watches (the limit
// reached), runs walk the worktree, stay exact, and the log says why -
// whether the limit is hit when the tracker starts or on a folder a run
// creates.
func TestRecorderWatchLimit(t *testing.T) {
	for _, allowed := range []int{0, 3} {
		t.Run(fmt.Sprintf("allowed=%d", allowed), func(t *testing.T) {
			root := testrepo.New(t, map[string]string{"a.txt": "1\n", "sub/b.txt": "b\n"})
			var log testrepo.Buffer
			r := NewRecorder(root, debugLogger(&log))
			defer r.Close()
			var mu sync.Mutex
			added := 0
			r.addWatch = func(fd int, path string, mask uint32) (int, error) {
				mu.Lock()
				defer mu.Unlock()
				if added >= allowed {
					return -1, unix.ENOSPC
				}
				added++
				return unix.InotifyAddWatch(fd, path, mask)
			}
			for i := range 3 {
				deep := fmt.Sprintf("new%d/deeper/x.txt", i)
				wantChanges(t, record(t, r, root, appendTo("a.txt", fmt.Sprintf("%d\n", i)), write(deep, "x\n")), []Change{
					{Path: "a.txt", Status: StatusModified, Insertions: 1},
					{Path: deep, Status: StatusAdded, Insertions: 1},
				})
			}
			if !strings.Contains(log.String(), "level=WARN") || !strings.Contains(log.String(), "file watcher unavailable") {
				t.Errorf("the log does not say the watcher is unavailable:\n%s", log.String())
			}
			if r.tracker != nil {
				t.Error("the tracker is still in use")
			}
		})
	}
}

// TestRecorderClose: Close releases the tracker; runs after it still work.
func TestRecorderClose(t *testing.T) {
	root := testrepo.New(t, map[string]string{"a.txt": "1\n"})
	r := NewRecorder(root, nil)
	for range 2 {
		record(t, r, root)
	}
	if r.tracker == nil {
		t.Fatal("no tracker after two runs")
	}
	r.Close()
	if r.tracker != nil {
		t.Error("Close left the tracker")
	}
	wantChanges(t, record(t, r, root, appendTo("a.txt", "2\n")),
		[]Change{{Path: "a.txt", Status: StatusModified, Insertions: 1}})
	if r.tracker != nil {
		t.Error("a run after Close started a tracker")
	}
}

// TestRecorderSplitAndSparseIndex: with a split index or a sparse index, a
// tracked file in an ignored folder is still the repository's, and a run
// that edits it reports it - whether the run walks (the first) or is
// tracked (the next ones), and after git rewrote the index between runs.
func TestRecorderSplitAndSparseIndex(t *testing.T) {
	for _, tt := range []struct {
		name  string
		setup []fsOp
	}{
		{"split", []fsOp{gitCmd("update-index", "--split-index"), appendTo("src/a.txt", "x\n"), gitCmd("add", "src/a.txt")}},
		{"sparse", []fsOp{gitCmd("sparse-checkout", "init", "--cone", "--sparse-index"), gitCmd("sparse-checkout", "set", "src", "build")}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := testrepo.New(t, map[string]string{".gitignore": "build/\n", "src/a.txt": "a\n", "other/o.txt": "o\n"})
			write("build/out.txt", "out\n")(t, root)
			gitCmd("add", "-f", "build/out.txt")(t, root)
			gitCmd("commit", "-q", "-m", "build output")(t, root)
			for _, op := range tt.setup {
				op(t, root)
			}
			var log testrepo.Buffer
			r := NewRecorder(root, debugLogger(&log))
			defer r.Close()
			edit := []fsOp{appendTo("build/out.txt", "more\n"), write("build/ignored.txt", "x\n")}
			want := []Change{{Path: "build/out.txt", Status: StatusModified, Insertions: 1}}
			wantChanges(t, record(t, r, root, edit...), want)
			wantChanges(t, record(t, r, root, edit...), want)
			gitCmd("add", "-f", "build/out.txt")(t, root)
			gitCmd("status", "--porcelain")(t, root)
			wantChanges(t, record(t, r, root, edit...), want)
			if r.tracker == nil || r.tracker.walks != 1 {
				t.Errorf("runs were not tracked from the second on:\n%s", log.String())
			}
			if strings.Contains(log.String(), "level=WARN") {
				t.Errorf("warnings:\n%s", log.String())
			}
		})
	}
}

// TestRecorderRunCommitsItsChanges: a run that commits what it changed
// rewrites the index before its report; the report is still what it
// changed, and the next run does not report it again.
func TestRecorderRunCommitsItsChanges(t *testing.T) {
	root := testrepo.New(t, map[string]string{"a.txt": "1\n", "b.txt": "b\n"})
	r := NewRecorder(root, nil)
	defer r.Close()
	r.Warm()
	run := []fsOp{
		appendTo("a.txt", "2\n"), write("new.txt", "n\n"),
		gitCmd("add", "-A"), gitCmd("commit", "-q", "-m", "from the run"), gitCmd("status", "--porcelain"),
	}
	wantChanges(t, record(t, r, root, run...), []Change{
		{Path: "a.txt", Status: StatusModified, Insertions: 1},
		{Path: "new.txt", Status: StatusAdded, Insertions: 1},
	})
	// new.txt is written again with the same content: not a change.
	wantChanges(t, record(t, r, root, run...), []Change{{Path: "a.txt", Status: StatusModified, Insertions: 1}})
	if got := record(t, r, root); len(got) > 0 {
		t.Errorf("the next run, which did nothing, reported %+v", got)
	}
}

// failWatch makes r's inotify refuse to watch folders named name with
// err, and counts the watches asked for.
func failWatch(r *Recorder, name string, err error) *atomic.Int64 {
	var calls atomic.Int64
	r.addWatch = func(fd int, path string, mask uint32) (int, error) {
		calls.Add(1)
		if filepath.Base(path) == name {
			return -1, err
		}
		return unix.InotifyAddWatch(fd, path, mask)
	}
	return &calls
}

// TestRecorderUnwatchableFolder: a folder inotify refuses to watch for
// lack of permission is left out as an unreadable folder is: the tracker
// works, without a warning or a walk per run. (TestRecorderUnreadableFolder
// has the real case, as an ordinary user.)
func TestRecorderUnwatchableFolder(t *testing.T) {
	root := testrepo.New(t, map[string]string{"a.txt": "1\n", "locked/x.txt": "x\n", "locked/deep/y.txt": "y\n"})
	var log testrepo.Buffer
	r := NewRecorder(root, debugLogger(&log))
	defer r.Close()
	failWatch(r, "locked", unix.EACCES)
	r.Warm()
	for i := range 3 {
		wantChanges(t, record(t, r, root, appendTo("a.txt", fmt.Sprintf("%d\n", i))),
			[]Change{{Path: "a.txt", Status: StatusModified, Insertions: 1}})
	}
	if r.tracker == nil || r.tracker.walks != 1 {
		t.Errorf("the tracker did not keep the baseline:\n%s", log.String())
	}
	if _, ok := r.tracker.snap.pos["locked/x.txt"]; ok {
		t.Error("a file in the unwatchable folder is in the baseline")
	}
	if strings.Contains(log.String(), "level=WARN") {
		t.Errorf("warnings:\n%s", log.String())
	}
}

// unreadableChildEnv marks the re-executed test binary of
// TestRecorderUnreadableFolder, running as an ordinary user.
const unreadableChildEnv = "OMNIDEV_TEST_UNREADABLE_CHILD"

// TestRecorderUnreadableFolder: as an ordinary user, a folder without read
// permission (chmod 000) can be neither listed nor watched; runs are
// tracked all the same, without warnings, and once the folder is readable
// again (its mode changed between runs) its files are the baseline's and a
// run's edit of one is reported. Run as root, the test re-executes itself
// as nobody, for whom permissions apply.
func TestRecorderUnreadableFolder(t *testing.T) {
	if os.Getuid() == 0 {
		runAsNobody(t, "TestRecorderUnreadableFolder", unreadableChildEnv)
		return
	}
	root := testrepo.New(t, map[string]string{"a.txt": "1\n", "locked/x.txt": "x\n"})
	chmod("locked", 0)(t, root)
	defer chmod("locked", 0o755)(t, root) // so that the temporary folder can be removed
	var log testrepo.Buffer
	r := NewRecorder(root, debugLogger(&log))
	defer r.Close()
	r.Warm()
	for i := range 2 {
		wantChanges(t, record(t, r, root, appendTo("a.txt", fmt.Sprintf("%d\n", i))),
			[]Change{{Path: "a.txt", Status: StatusModified, Insertions: 1}})
	}
	chmod("locked", 0o755)(t, root)
	wantChanges(t, record(t, r, root, appendTo("locked/x.txt", "more\n")),
		[]Change{{Path: "locked/x.txt", Status: StatusModified, Insertions: 1}})
	if r.tracker == nil || r.tracker.walks != 1 {
		t.Errorf("the tracker did not keep the baseline:\n%s", log.String())
	}
	if strings.Contains(log.String(), "level=WARN") {
		t.Errorf("warnings:\n%s", log.String())
	}
}

// runAsNobody runs the test named name again in a copy of the test binary
// as user and group 65534, with env set, and fails if it does not pass.
func runAsNobody(t *testing.T, name, env string) {
	t.Helper()
	dir := t.TempDir()
	// The test binary's own folder is root's alone.
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "changes.test")
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "home")
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(home, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), bin, "-test.run=^"+name+"$", "-test.count=1", "-test.v")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "TMPDIR=" + home, env + "=1"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+name) {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
}

// TestRecorderBackOff: after the tracker fails to build for any reason
// (here an error inotify has no business returning), runs walk for a
// while without trying again at every run, and the failure is warned
// about once.
func TestRecorderBackOff(t *testing.T) {
	root := testrepo.New(t, map[string]string{"a.txt": "1\n", "odd/x.txt": "x\n"})
	var log testrepo.Buffer
	r := NewRecorder(root, debugLogger(&log))
	defer r.Close()
	calls := failWatch(r, "odd", unix.EINVAL)
	r.Warm()
	wantChanges(t, record(t, r, root, appendTo("a.txt", "1\n")),
		[]Change{{Path: "a.txt", Status: StatusModified, Insertions: 1}})
	tried := calls.Load()
	for i := range 3 {
		wantChanges(t, record(t, r, root, appendTo("odd/x.txt", fmt.Sprintf("%d\n", i))),
			[]Change{{Path: "odd/x.txt", Status: StatusModified, Insertions: 1}})
	}
	if calls.Load() != tried {
		t.Errorf("the tracker was tried again: %d watches, then %d", tried, calls.Load())
	}
	if n := strings.Count(log.String(), "level=WARN"); n != 1 {
		t.Errorf("%d warnings, want 1:\n%s", n, log.String())
	}
	if r.tracker != nil {
		t.Error("the tracker is still in use")
	}
}

// TestRecorderWarm: a warmed Recorder's first run is tracked - whether it
// comes once the baseline is built or while it is being built - and exact;
// changes made between Warm and the run are not the run's. Close stops a
// build under way.
func TestRecorderWarm(t *testing.T) {
	edit := appendTo(testrepo.Path(7), "run\n")
	want := []Change{{Path: testrepo.Path(7), Status: StatusModified, Insertions: 1}}
	for _, wait := range []bool{true, false} {
		t.Run(fmt.Sprintf("wait=%v", wait), func(t *testing.T) {
			root := testrepo.Generate(t, 2_000)
			var log testrepo.Buffer
			r := NewRecorder(root, debugLogger(&log))
			defer r.Close()
			r.Warm()
			if wait {
				<-r.build.done
				appendTo(testrepo.Path(7), "editor\n")(t, root)
				write("notes.txt", "n\n")(t, root)
			}
			m, err := r.Before(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			edit(t, root)
			got, err := m.Changes(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			wantChanges(t, got, want)
			if !m.Tracked() || r.tracker == nil || r.tracker.walks != 1 {
				t.Errorf("the first run was not tracked:\n%s", log.String())
			}
		})
	}
	t.Run("close", func(t *testing.T) {
		root := testrepo.Generate(t, 2_000)
		r := NewRecorder(root, nil)
		r.Warm()
		r.Close()
		if r.tracker != nil || r.build != nil {
			t.Error("Close left the tracker or its build")
		}
		wantChanges(t, record(t, r, root, edit), want)
	})
}

// TestReadInRefusesSwap: a file replaced by a symlink between its Lstat and
// its read is refused, not followed.
func TestReadInRefusesSwap(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "f"), []byte("mine"), 0o644)
	os.WriteFile(filepath.Join(dir, "secret"), []byte("secret"), 0o644)
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	fi, err := root.Lstat("f")
	if err != nil {
		t.Fatal(err)
	}
	if data, err := ReadIn(root, "f", fi, 100); err != nil || string(data) != "mine" {
		t.Fatalf("ReadIn = %q, %v", data, err)
	}
	os.Remove(filepath.Join(dir, "f"))
	os.Symlink("secret", filepath.Join(dir, "f"))
	data, err := ReadIn(root, "f", fi, 100)
	if !errors.Is(err, ErrReplaced) || strings.Contains(string(data), "secret") {
		t.Errorf("ReadIn after the swap = %q, %v; want ErrReplaced", data, err)
	}
}
