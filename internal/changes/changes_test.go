package changes

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/omnidev/omnidev/internal/testrepo"
)

// fsOp is one file-system step of a test, in Go rather than through a
// runtime: the change detection does not care who edits the files.
type fsOp func(t *testing.T, root string)

func write(rel, content string) fsOp {
	return func(t *testing.T, root string) { testrepo.WriteFiles(t, root, map[string]string{rel: content}) }
}

func appendTo(rel, content string) fsOp {
	return func(t *testing.T, root string) {
		f, err := os.OpenFile(filepath.Join(root, rel), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(content); err != nil {
			t.Fatal(err)
		}
	}
}

func remove(rel string) fsOp {
	return func(t *testing.T, root string) {
		if err := os.Remove(filepath.Join(root, rel)); err != nil {
			t.Fatal(err)
		}
	}
}

func chmod(rel string, mode os.FileMode) fsOp {
	return func(t *testing.T, root string) {
		if err := os.Chmod(filepath.Join(root, rel), mode); err != nil {
			t.Fatal(err)
		}
	}
}

func symlink(target, rel string) fsOp {
	return func(t *testing.T, root string) {
		if err := os.Symlink(target, filepath.Join(root, rel)); err != nil {
			t.Fatal(err)
		}
	}
}

func rename(from, to string) fsOp {
	return func(t *testing.T, root string) {
		if err := os.Rename(filepath.Join(root, from), filepath.Join(root, to)); err != nil {
			t.Fatal(err)
		}
	}
}

func gitCmd(args ...string) fsOp {
	return func(t *testing.T, root string) { testrepo.Git(t, root, args...) }
}

func lines(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

// changeCase is one case of what a run changed, shared by the tests of
// the walk (TestChanges) and of the tracker (TestTrackerChanges).
type changeCase struct {
	name   string
	noGit  bool
	files  map[string]string // committed (or just written, without git)
	before []fsOp            // edits already in the worktree before the run
	run    []fsOp            // what the run does
	want   []Change
}

func TestChanges(t *testing.T) {
	for _, tt := range changeCases() {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := tt.newRoot(t)
			for _, op := range tt.before {
				op(t, root)
			}
			snap, err := takeSnapshot(t.Context(), root, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, op := range tt.run {
				op(t, root)
			}
			got, err := snap.changes(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if len(got) == 0 && len(tt.want) == 0 {
				return
			}
			if !reflect.DeepEqual(withoutPrior(got), tt.want) {
				t.Errorf("changes:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// newRoot creates the case's worktree: a committed git repository of its
// files, or a plain folder of them.
func (tt changeCase) newRoot(t *testing.T) string {
	if tt.noGit {
		root := t.TempDir()
		testrepo.WriteFiles(t, root, tt.files)
		return root
	}
	return testrepo.New(t, tt.files)
}

func changeCases() []changeCase {
	big := strings.Repeat("0123456789abcdef\n", (maxCopyBytes+1)/17+1)
	huge := strings.Repeat("0123456789abcdef\n", maxDiffBytes/17+1)
	return []changeCase{
		{
			name: "new untracked file",
			run:  []fsOp{write("new.txt", "a\nb\nc\n")},
			want: []Change{{Path: "new.txt", Status: StatusAdded, Insertions: 3}},
		},
		{
			name:  "tracked file edited",
			files: map[string]string{"a.txt": "1\n2\n3\n"},
			run:   []fsOp{write("a.txt", "1\ntwo\n3\n")},
			want:  []Change{{Path: "a.txt", Status: StatusModified, Insertions: 1, Deletions: 1}},
		},
		{
			name:   "dirty file edited further counts only the run's lines",
			files:  map[string]string{"a.txt": "1\n2\n3\n"},
			before: []fsOp{appendTo("a.txt", "4\n5\n")},
			run:    []fsOp{appendTo("a.txt", "6\n")},
			want:   []Change{{Path: "a.txt", Status: StatusModified, Insertions: 1}},
		},
		{
			name:   "edits made before the run are not the run's",
			files:  map[string]string{"a.txt": "1\n", "b.txt": "1\n"},
			before: []fsOp{appendTo("a.txt", "2\n"), write("untracked.txt", "x\n"), remove("b.txt")},
		},
		{
			name:  "deleted file",
			files: map[string]string{"a.txt": lines(4), "keep.txt": "k\n"},
			run:   []fsOp{remove("a.txt")},
			want:  []Change{{Path: "a.txt", Status: StatusDeleted, Deletions: 4}},
		},
		{
			name:   "untracked file edited further",
			before: []fsOp{write("notes.txt", "a\n")},
			run:    []fsOp{appendTo("notes.txt", "b\nc\n")},
			want:   []Change{{Path: "notes.txt", Status: StatusModified, Insertions: 2}},
		},
		{
			name:  "changed and changed back",
			files: map[string]string{"a.txt": "same\n"},
			before: []fsOp{
				write("dirty.txt", "d\n"),
			},
			run: []fsOp{
				write("a.txt", "different\n"), write("a.txt", "same\n"),
				write("dirty.txt", "other\n"), write("dirty.txt", "d\n"),
			},
		},
		{
			name:  "binary files",
			files: map[string]string{"img.bin": "\x89PNG\x00\x01"},
			run:   []fsOp{write("img.bin", "\x89PNG\x00\x02\x03"), write("new.bin", "a\x00b")},
			want: []Change{
				{Path: "img.bin", Status: StatusModified, Binary: true},
				{Path: "new.bin", Status: StatusAdded, Binary: true},
			},
		},
		{
			name:  "nested .gitignore",
			files: map[string]string{"sub/.gitignore": "*.log\n", "sub/keep.txt": "k\n"},
			run:   []fsOp{write("sub/x.log", "x\n"), write("sub/deeper/y.log", "y\n"), write("x.log", "x\n")},
			want:  []Change{{Path: "x.log", Status: StatusAdded, Insertions: 1}},
		},
		{
			name:  "ignored folder",
			files: map[string]string{".gitignore": "build/\n"},
			run:   []fsOp{write("build/out.js", "x\n"), write("build/deep/a.js", "y\n")},
		},
		{
			name:   "tracked files are reported even when ignored",
			files:  map[string]string{".gitignore": "*.txt\nbuild/\n", "a.txt": "1\n", "build/keep.txt": "k\n"},
			before: []fsOp{gitCmd("add", "-f", "a.txt", "build/keep.txt"), gitCmd("commit", "-q", "-m", "force")},
			run:    []fsOp{appendTo("a.txt", "2\n"), appendTo("build/keep.txt", "k\n"), write("build/new.txt", "n\n"), write("b.txt", "b\n")},
			want: []Change{
				{Path: "a.txt", Status: StatusModified, Insertions: 1},
				{Path: "build/keep.txt", Status: StatusModified, Insertions: 1},
			},
		},
		{
			name:   "info/exclude",
			before: []fsOp{write(".git/info/exclude", "secret/\n")},
			run:    []fsOp{write("secret/key.pem", "k\n")},
		},
		{
			name: ".omni and .git are never reported",
			run:  []fsOp{write(".omni/state/tasks.json", "{}\n"), write(".omni/sandbox/main.ts", "x\n"), write(".git/omnidev-test", "x\n")},
		},
		{
			name: "a nested repository is left alone",
			run:  []fsOp{write("vendor/lib/.git/HEAD", "ref: refs/heads/main\n"), write("vendor/lib/a.txt", "a\n")},
		},
		{
			name: "a .gitignore the run writes applies to what it generates",
			run:  []fsOp{write(".gitignore", "out/\n"), write("out/bundle.js", "x\n")},
			want: []Change{{Path: ".gitignore", Status: StatusAdded, Insertions: 1}},
		},
		{
			name:   "a file the run newly ignores is not reported as deleted",
			before: []fsOp{write("scratch.txt", "s\n")},
			run:    []fsOp{write(".gitignore", "scratch.txt\n")},
			want:   []Change{{Path: ".gitignore", Status: StatusAdded, Insertions: 1}},
		},
		{
			name:  "executable bit",
			files: map[string]string{"run.sh": "echo hi\n"},
			run:   []fsOp{chmod("run.sh", 0o755)},
			want:  []Change{{Path: "run.sh", Status: StatusModified}},
		},
		{
			name: "symlink",
			run:  []fsOp{symlink("target.txt", "link")},
			want: []Change{{Path: "link", Status: StatusAdded, Insertions: 1}},
		},
		{
			name:  "rename is a deletion and an addition",
			files: map[string]string{"old.txt": lines(2)},
			run:   []fsOp{rename("old.txt", "new.txt")},
			want: []Change{
				{Path: "new.txt", Status: StatusAdded, Insertions: 2},
				{Path: "old.txt", Status: StatusDeleted, Deletions: 2},
			},
		},
		{
			name:  "the run's own git commands do not change the baseline",
			files: map[string]string{"a.txt": "1\n"},
			run:   []fsOp{appendTo("a.txt", "2\n"), gitCmd("add", "a.txt"), gitCmd("commit", "-q", "-m", "run")},
			want:  []Change{{Path: "a.txt", Status: StatusModified, Insertions: 1}},
		},
		{
			name:   "large files get a status without line counts",
			files:  map[string]string{"huge.txt": huge},
			before: []fsOp{write("big.txt", big)},
			run:    []fsOp{appendTo("huge.txt", "x\n"), appendTo("big.txt", "x\n")},
			want: []Change{
				{Path: "big.txt", Status: StatusModified, TooLarge: true},
				{Path: "huge.txt", Status: StatusModified, TooLarge: true},
			},
		},
		{
			name:  "outside git, every file is compared with its copy",
			noGit: true,
			files: map[string]string{"a.txt": "1\n2\n", "b.txt": lines(3), "c.txt": "same\n", ".gitignore": "*.log\n"},
			run: []fsOp{
				appendTo("a.txt", "3\n"), remove("b.txt"), write("new.txt", "n\n"),
				write("c.txt", "other\n"), write("c.txt", "same\n"), write("x.log", "l\n"),
			},
			want: []Change{
				{Path: "a.txt", Status: StatusModified, Insertions: 1},
				{Path: "b.txt", Status: StatusDeleted, Deletions: 3},
				{Path: "new.txt", Status: StatusAdded, Insertions: 1},
			},
		},
	}
}

// TestChangesBelowWorktreeTop covers a repository root (the folder holding
// omni/) inside a larger git worktree: paths are relative to the root, the
// index's entries are found under their prefix, and .gitignore files above
// the root apply.
func TestChangesBelowWorktreeTop(t *testing.T) {
	top := testrepo.New(t, map[string]string{
		".gitignore":      "*.log\n",
		"other/x.txt":     "x\n",
		"proj/a.txt":      "1\n2\n",
		"proj/omni/x.txt": "x\n",
	})
	root := filepath.Join(top, "proj")
	snap, err := takeSnapshot(t.Context(), root, nil)
	if err != nil {
		t.Fatal(err)
	}
	if i, ok := snap.pos["a.txt"]; !ok || snap.files[i].kind != inIndex {
		t.Fatalf("a.txt is not matched to its index entry: %+v", snap.files)
	}
	testrepo.WriteFiles(t, top, map[string]string{"proj/a.txt": "1\ntwo\n", "proj/debug.log": "l\n", "other/x.txt": "changed\n"})
	got, err := snap.changes(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := []Change{{Path: "a.txt", Status: StatusModified, Insertions: 1, Deletions: 1}}
	if !reflect.DeepEqual(withoutPrior(got), want) {
		t.Errorf("changes:\n got %+v\nwant %+v", got, want)
	}
}

// TestChangesGlobalExcludes covers the user's global excludes file, at its
// XDG default and through core.excludesFile. It sets the environment, so it
// does not run in parallel.
func TestChangesGlobalExcludes(t *testing.T) {
	home, xdg := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", xdg)
	t.Setenv("GIT_CONFIG_GLOBAL", "")
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	testrepo.WriteFiles(t, xdg, map[string]string{"git/ignore": "*.tmp\n"})
	root := testrepo.New(t, map[string]string{"a.txt": "a\n"})
	check := func(name string, want []Change) {
		t.Helper()
		snap, err := takeSnapshot(t.Context(), root, nil)
		if err != nil {
			t.Fatal(err)
		}
		testrepo.WriteFiles(t, root, map[string]string{name: "x\n"})
		got, err := snap.changes(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if (len(got) > 0 || len(want) > 0) && !reflect.DeepEqual(withoutPrior(got), want) {
			t.Errorf("after writing %s, changes = %+v, want %+v", name, got, want)
		}
	}
	check("x.tmp", nil)
	check("x.bak", []Change{{Path: "x.bak", Status: StatusAdded, Insertions: 1}})

	testrepo.WriteFiles(t, home, map[string]string{
		".gitconfig":    "[core]\n\texcludesFile = ~/my-ignores\n",
		"my-ignores":    "*.orig\n",
		"unrelated.txt": "",
	})
	check("y.orig", nil)
	check("y.tmp", []Change{{Path: "y.tmp", Status: StatusAdded, Insertions: 1}})
}

// TestReadIndexCache checks that the decoded index is reused while the
// index file is unchanged, and read again once git writes it.
func TestReadIndexCache(t *testing.T) {
	root := testrepo.New(t, map[string]string{"a.txt": "a\n"})
	r, err := openRepository(root)
	if err != nil {
		t.Fatal(err)
	}
	indexes := newIndexReader(nil)
	first := indexes.read(t.Context(), r)
	if !first.tracked("a.txt") {
		t.Fatalf("index lacks a.txt: %+v", first)
	}
	if again := indexes.read(t.Context(), r); again != first {
		t.Error("an unchanged index was decoded again")
	}
	testrepo.WriteFiles(t, root, map[string]string{"b.txt": "b\n"})
	testrepo.Git(t, root, "add", "b.txt")
	next := indexes.read(t.Context(), r)
	if next == first || !next.tracked("b.txt") {
		t.Error("a changed index was not read again")
	}
}

// TestChangesRacy covers files whose stat data cannot tell a change: on a
// filesystem with coarse timestamps, a same-size rewrite within the tick
// of the snapshot leaves size and times equal. Such recently modified
// ("racy") files are compared by content whatever their stat says.
func TestChangesRacy(t *testing.T) {
	root := testrepo.New(t, map[string]string{"tracked.txt": "aaaa\n"})
	testrepo.WriteFiles(t, root, map[string]string{"tracked.txt": "bbbb\n", "untracked.txt": "cccc\n"})
	snap, err := takeSnapshot(t.Context(), root, nil)
	if err != nil {
		t.Fatal(err)
	}
	testrepo.WriteFiles(t, root, map[string]string{"tracked.txt": "BBBB\n", "untracked.txt": "CCCC\n"})
	// Simulate the coarse tick: the snapshot saw the stat data of now.
	for i := range snap.files {
		if !snap.files[i].racy {
			t.Errorf("%s was modified just now but is not racy", snap.files[i].rel)
		}
		st, _ := lstatFile(root, snap.files[i].rel)
		snap.files[i].stat = st
	}
	got, err := snap.changes(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := []Change{
		{Path: "tracked.txt", Status: StatusModified, Insertions: 1, Deletions: 1},
		{Path: "untracked.txt", Status: StatusModified, Insertions: 1, Deletions: 1},
	}
	if !reflect.DeepEqual(withoutPrior(got), want) {
		t.Errorf("changes:\n got %+v\nwant %+v", got, want)
	}
}

// withoutPrior drops what internal/runs reads, which the tests here do not
// compare.
func withoutPrior(cs []Change) []Change {
	out := slices.Clone(cs)
	for i := range out {
		out[i].Prior = nil
	}
	return out
}
