package changes

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing/format/index"

	"github.com/omnidev/omnidev/internal/testrepo"
)

// lsFiles returns what git lists of the index below root, one line per
// entry as "<mode> <hash> <path>", stage 0 only, sparse folders (mode
// 040000) apart.
func lsFiles(t *testing.T, root string, sparse bool) (files, dirs []string) {
	t.Helper()
	args := []string{"ls-files", "--stage", "-z"}
	if sparse {
		args = append(args, "--sparse")
	}
	for line := range strings.SplitSeq(testrepo.Git(t, root, args...), "\x00") {
		meta, name, ok := strings.Cut(line, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 3 || f[2] != "0" || f[0] == "160000" {
			continue
		}
		if f[0] == "040000" {
			dirs = append(dirs, strings.TrimSuffix(name, "/"))
			continue
		}
		files = append(files, fmt.Sprintf("%s %s %s", f[0], f[1], name))
	}
	return files, dirs
}

// indexLines renders x as lsFiles does.
func indexLines(x *gitIndex) (files, dirs []string) {
	for _, n := range x.names.ents {
		e, _ := x.entry(n.rel)
		files = append(files, fmt.Sprintf("%06o %s %s", uint32(e.mode), e.hash, n.rel))
	}
	return files, x.names.sparse
}

// TestIndexReader reads every kind of index git writes - versions 2, 3
// and 4, split, sparse, with conflicts - and checks it against what `git
// ls-files` lists; `git ls-files` itself, the fallback for what is not
// decoded, must read the same. A tracked file whose stat data git
// recorded must match its entry without being read.
func TestIndexReader(t *testing.T) {
	files := map[string]string{
		".gitignore": "build/\n", "a.txt": "a\n", "src/b.txt": "b\n", "src/c.sh": "c\n",
		"other/deep/d.txt": "d\n", "other/o.txt": "o\n", "z.txt": "z\n",
	}
	tests := []struct {
		name   string
		setup  []fsOp
		sparse bool
		// split: the index must hold a link to a shared index, with
		// entries deleted and replaced when edits is set.
		split, edits bool
	}{
		{name: "version 2"},
		{name: "version 3", setup: []fsOp{write("new.txt", "n\n"), gitCmd("add", "-N", "new.txt")}},
		{name: "version 4", setup: []fsOp{gitCmd("update-index", "--index-version", "4"), write("src/e.txt", "e\n"), gitCmd("add", "src/e.txt")}},
		{name: "split", split: true, edits: true, setup: []fsOp{
			gitCmd("update-index", "--split-index"),
			appendTo("a.txt", "more\n"), gitCmd("add", "a.txt"), // replaced
			gitCmd("rm", "-q", "--cached", "src/c.sh"),                // deleted
			write("src/new.txt", "n\n"), gitCmd("add", "src/new.txt"), // added
			chmod("z.txt", 0o755), gitCmd("add", "z.txt"), // replaced
		}},
		{name: "split, version 4", split: true, edits: true, setup: []fsOp{
			gitCmd("update-index", "--index-version", "4"), gitCmd("update-index", "--split-index"),
			appendTo("a.txt", "more\n"), gitCmd("add", "a.txt"),
			gitCmd("rm", "-q", "--cached", "src/c.sh"),
			write("src/new.txt", "n\n"), gitCmd("add", "src/new.txt"),
		}},
		{name: "sparse", sparse: true, setup: []fsOp{
			gitCmd("sparse-checkout", "init", "--cone", "--sparse-index"),
			gitCmd("sparse-checkout", "set", "src", "build"),
		}},
		{name: "conflicts", setup: []fsOp{func(t *testing.T, root string) {
			blob := strings.TrimSpace(testrepo.Git(t, root, "hash-object", "-w", "a.txt"))
			cmd := fmt.Sprintf("0 %s\tz.txt\n100644 %s 1\tz.txt\n100644 %s 2\tz.txt\n", strings.Repeat("0", 40), blob, blob)
			gitStdin(t, root, cmd, "update-index", "--index-info")
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := testrepo.New(t, files)
			write("build/out.txt", "o\n")(t, root)
			gitCmd("add", "-f", "build/out.txt")(t, root)
			for _, op := range tt.setup {
				op(t, root)
			}
			r, err := openRepository(root)
			if err != nil {
				t.Fatal(err)
			}
			ir := newIndexReader(nil)
			data, key, release, err := ir.mapFile(filepath.Join(r.gitDir, "index"))
			if err != nil {
				t.Fatal(err)
			}
			defer release()
			x, err := ir.decode(r, data, key)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			f, _ := parseIndexFile(data)
			if l := f.link; tt.split && (l == nil || tt.edits && (len(l.deleted) == 0 || len(l.replaced) == 0)) || !tt.split && l != nil {
				t.Fatalf("split index link %+v", l)
			}
			wantFiles, wantDirs := lsFiles(t, root, tt.sparse)
			gotFiles, gotDirs := indexLines(x)
			if !slices.Equal(wantFiles, gotFiles) {
				t.Errorf("files:\n git %q\n got %q", wantFiles, gotFiles)
			}
			if !slices.Equal(wantDirs, gotDirs) {
				t.Errorf("sparse folders: git %q, got %q", wantDirs, gotDirs)
			}
			if tt.sparse != (len(gotDirs) > 0) {
				t.Errorf("sparse folders %q", gotDirs)
			}
			if !x.hasBelow("build") || x.hasBelow("nothing") {
				t.Error("hasBelow does not see the tracked file in build/")
			}
			matched := 0
			for _, n := range x.names.ents {
				st, ok := lstatFile(root, n.rel)
				e, _ := x.entry(n.rel)
				// Files written after testrepo.New are too recent to match
				// ("racily clean"); the others were aged before it wrote
				// the index.
				if ok && st.mtime < x.modTime-int64(30*time.Second) && blobOf(t, root, n.rel) == e.hash.String() {
					if !x.matchesIndex(e, st) {
						t.Errorf("%s: stat data %+v does not match its clean entry %+v", n.rel, st, e)
					}
					matched++
				}
			}
			if matched < 3 {
				t.Errorf("only %d clean files matched their entries", matched)
			}

			listed, err := ir.list(t.Context(), r, key)
			if err != nil {
				t.Fatal(err)
			}
			listedFiles, _ := indexLines(listed)
			if !tt.sparse && !slices.Equal(wantFiles, listedFiles) {
				t.Errorf("git ls-files fallback:\n    git %q\n listed %q", wantFiles, listedFiles)
			}
		})
	}
}

// TestGoGitIndexDecoder notices when go-git moves: its index decoder
// refuses split and sparse indexes, one of the two reasons gitindex.go
// decodes the index itself (doc.go says the other, with its figure). If
// this fails, go-git reads them now: run BenchmarkIndexRead again, and let
// gitindex.go go if it no longer earns its place.
func TestGoGitIndexDecoder(t *testing.T) {
	for _, tt := range []struct {
		name  string
		setup []fsOp
	}{
		{"split", []fsOp{gitCmd("update-index", "--split-index")}},
		{"sparse", []fsOp{gitCmd("sparse-checkout", "init", "--cone", "--sparse-index"), gitCmd("sparse-checkout", "set", "src")}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := testrepo.New(t, map[string]string{"src/a.txt": "a\n", "other/b.txt": "b\n"})
			for _, op := range tt.setup {
				op(t, root)
			}
			data, err := os.ReadFile(filepath.Join(root, ".git", "index"))
			if err != nil {
				t.Fatal(err)
			}
			var idx index.Index
			err = index.NewDecoder(bytes.NewReader(data)).Decode(&idx)
			if err == nil {
				t.Fatalf("go-git now decodes a %s index (%d entries): see whether gitindex.go still earns its place", tt.name, len(idx.Entries))
			}
			t.Logf("go-git: %v", err)
		})
	}
}

// gitStdin runs git with stdin.
func gitStdin(t testing.TB, dir, stdin string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	cmd.Stdin = strings.NewReader(stdin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// blobOf returns the blob hash of a file's content.
func blobOf(t *testing.T, root, rel string) string {
	st, _ := lstatFile(root, rel)
	data, err := readContent(filepath.Join(root, rel), st)
	if err != nil {
		t.Fatal(err)
	}
	return blobHash(data).String()
}

// TestIndexReaderRewrites follows the index through the rewrites git makes
// between runs. Those that keep every entry's name and place (`git
// status` refreshing stat data, `git add` of a tracked file, a mode
// change) keep the decoded names, and the fields read are the new ones;
// the others (a rename, an entry removed or added) are decoded again.
func TestIndexReaderRewrites(t *testing.T) {
	root := testrepo.New(t, map[string]string{"a.txt": "a\n", "m.txt": "m\n", "src/b.txt": "b\n"})
	r, err := openRepository(root)
	if err != nil {
		t.Fatal(err)
	}
	ir := newIndexReader(nil)
	prev := ir.read(t.Context(), r)
	steps := []struct {
		name      string
		ops       []fsOp
		sameFiles bool
		check     func(t *testing.T, x *gitIndex)
	}{
		{
			name:      "stat data refreshed",
			ops:       []fsOp{appendTo("a.txt", "x\n"), write("a.txt", "a\n"), gitCmd("status", "--porcelain")},
			sameFiles: true,
			check: func(t *testing.T, x *gitIndex) {
				e, _ := x.entry("a.txt")
				if st, _ := lstatFile(root, "a.txt"); e.mtime != st.mtime {
					t.Errorf("a.txt's entry has mtime %d, the file %d", e.mtime, st.mtime)
				}
			},
		},
		{
			name:      "a tracked file added again",
			ops:       []fsOp{write("m.txt", "changed\n"), gitCmd("add", "m.txt")},
			sameFiles: true,
			check: func(t *testing.T, x *gitIndex) {
				if e, _ := x.entry("m.txt"); e.hash.String() != blobOf(t, root, "m.txt") {
					t.Errorf("m.txt's entry has hash %s, not its new content's", e.hash)
				}
			},
		},
		{
			name:      "a mode changed",
			ops:       []fsOp{gitCmd("update-index", "--chmod=+x", "a.txt")},
			sameFiles: true,
			check: func(t *testing.T, x *gitIndex) {
				if e, _ := x.entry("a.txt"); e.mode != 0o100755 {
					t.Errorf("a.txt's mode is %o", e.mode)
				}
			},
		},
		{
			name: "renamed to a name of the same length",
			ops:  []fsOp{gitCmd("mv", "a.txt", "c.txt")},
			check: func(t *testing.T, x *gitIndex) {
				if x.tracked("a.txt") || !x.tracked("c.txt") {
					t.Error("the rename is not seen")
				}
			},
		},
		{
			name: "an entry removed",
			ops:  []fsOp{gitCmd("rm", "-q", "--cached", "m.txt")},
			check: func(t *testing.T, x *gitIndex) {
				if x.tracked("m.txt") || x.len() != 2 {
					t.Error("the removal is not seen")
				}
			},
		},
	}
	for _, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			for _, op := range step.ops {
				op(t, root)
			}
			x := ir.read(t.Context(), r)
			if x == prev {
				t.Fatal("the rewritten index was not read again")
			}
			if got := prev.sameFiles(x); got != step.sameFiles {
				t.Errorf("sameFiles = %v, want %v", got, step.sameFiles)
			}
			step.check(t, x)
			prev = x
		})
	}
}

// TestIndexReaderUnreadable: an index neither this package nor git can
// read is warned about once, not at every run, and runs compare files with
// copies instead.
func TestIndexReaderUnreadable(t *testing.T) {
	root := testrepo.New(t, map[string]string{"a.txt": "a\n"})
	r, err := openRepository(root)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(r.gitDir, "index")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// A required extension nobody knows, before the checksum.
	bad := append(bytes.Clone(data[:len(data)-20]), "zzzz\x00\x00\x00\x00"...)
	bad = append(bad, data[len(data)-20:]...)
	if err := os.WriteFile(path, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	var log testrepo.Buffer
	ir := newIndexReader(slog.New(slog.NewTextHandler(&log, nil)))
	for range 3 {
		if x := ir.read(t.Context(), r); x != nil {
			t.Fatalf("read an index with an unknown required extension: %+v", x)
		}
	}
	if n := strings.Count(log.String(), "cannot read the git index"); n != 1 {
		t.Errorf("warned %d times, want once:\n%s", n, log.String())
	}
	snap, err := takeSnapshot(t.Context(), root, ir)
	if err != nil {
		t.Fatal(err)
	}
	appendTo("a.txt", "b\n")(t, root)
	got, err := snap.changes(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if want := []Change{{Path: "a.txt", Status: StatusModified, Insertions: 1}}; !slices.Equal(withoutPrior(got), want) {
		t.Errorf("changes:\n got %+v\nwant %+v", got, want)
	}
}

// TestIndexReaderTruncated: a program that cuts the index file short in
// place while it is mapped (git never does; a tool writing the index
// without a lock file might) makes reading it an error, not a crash.
func TestIndexReaderTruncated(t *testing.T) {
	files := map[string]string{}
	for i := range 2_000 {
		files[testrepo.Path(i)] = "x\n"
	}
	root := testrepo.New(t, files)
	r, err := openRepository(root)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(r.gitDir, "index")
	ir := newIndexReader(nil)
	data, key, release, err := ir.mapFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if err := os.Truncate(path, 100); err != nil {
		t.Fatal(err)
	}
	if x, err := ir.decodeMapped(r, data, key); err == nil || !strings.Contains(err.Error(), "cut short") {
		t.Fatalf("decodeMapped = %v, %v; want the error of a file cut short", x, err)
	}
}
