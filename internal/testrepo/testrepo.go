// Package testrepo is test support shared by other packages' tests and
// benchmarks: git repositories, and a buffer to collect logs or output in.
// No production code imports it, and it never touches anything outside the
// folders it is given.
package testrepo

import (
	"bytes"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// gitEnv keeps the developer's git configuration out of the tests' git
// commands (signing, hooks, templates...).
var gitEnv = []string{
	"GIT_CONFIG_GLOBAL=/dev/null",
	"GIT_CONFIG_NOSYSTEM=1",
	"GIT_AUTHOR_NAME=omnidev test", "GIT_AUTHOR_EMAIL=test@example.com",
	"GIT_COMMITTER_NAME=omnidev test", "GIT_COMMITTER_EMAIL=test@example.com",
}

// Git runs the git CLI in dir and returns its combined output.
func Git(tb testing.TB, dir string, args ...string) string {
	tb.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), gitEnv...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// WriteFiles writes files (slash paths relative to root) with their content.
func WriteFiles(tb testing.TB, root string, files map[string]string) {
	tb.Helper()
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

// New creates a repository at a new temporary root holding files, all
// committed.
func New(tb testing.TB, files map[string]string) string {
	tb.Helper()
	root := tb.TempDir()
	WriteFiles(tb, root, files)
	Git(tb, root, "init", "-q", "-b", "main")
	// No `git gc --auto` in the background: after a big commit it would
	// pack objects while a test reads them or removes the folder.
	Git(tb, root, "config", "gc.auto", "0")
	Git(tb, root, "add", "-A")
	Git(tb, root, "commit", "-q", "--allow-empty", "-m", "initial")
	// The index was written in the same second as the files: make them
	// older, as in any repository not committed this instant, so the tests
	// see clean files as clean (the racy case has tests of its own).
	AgeIndexedFiles(tb, root)
	return root
}

// AgeIndexedFiles sets every file's mtime a minute back and refreshes the
// index so it records them.
func AgeIndexedFiles(tb testing.TB, root string) {
	tb.Helper()
	old := time.Now().Add(-time.Minute)
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			os.Chtimes(path, old, old)
		}
		return nil
	})
	Git(tb, root, "update-index", "-q", "--refresh")
}

// Path is the path of the i-th file of a Generated repository: 20 files per
// folder, 20 folders per top-level folder.
func Path(i int) string {
	return fmt.Sprintf("d%03d/e%02d/f%05d.txt", i/400, i/20%20, i)
}

// Generate creates a repository of n tracked text files (about 600 bytes
// each, at Path(0)..Path(n-1)) and a typical .gitignore, all committed.
func Generate(tb testing.TB, n int) string {
	tb.Helper()
	start := time.Now()
	files := map[string]string{
		".gitignore": "node_modules/\ndist/\n*.log\n.env\n.DS_Store\ncoverage/\n*.tmp\nbuild/\n.omni/\n",
	}
	for i := range n {
		files[Path(i)] = strings.Repeat(fmt.Sprintf("file %d: some source text of a typical length\n", i), 12)
	}
	root := New(tb, files)
	tb.Logf("generated %d files in %v", n, time.Since(start).Round(time.Millisecond))
	return root
}

// EditProgram is the benchmarks' typical small edit by an agent, as a
// TypeScript program for a Generated repository: it appends a line to three
// tracked files and creates created.txt.
func EditProgram() string {
	return fmt.Sprintf(`import { appendFileSync, writeFileSync } from "node:fs";
appendFileSync(%q, "edit\n");
appendFileSync(%q, "edit\n");
appendFileSync(%q, "edit\n");
writeFileSync("created.txt", "new\n");
`, Path(0), Path(123), Path(456))
}

// Buffer collects what a logger or a process writes while a test reads it:
// a bytes.Buffer safe for concurrent use.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// CopyOmni returns a new folder holding a copy of this repository's own
// omni/ (the capabilities the end-to-end tests serve). It is for tests of
// packages two levels below the module root, which is where they all are.
func CopyOmni(tb testing.TB) string {
	tb.Helper()
	root := tb.TempDir()
	if err := os.CopyFS(filepath.Join(root, "omni"), os.DirFS("../../omni")); err != nil {
		tb.Fatal(err)
	}
	return root
}

// GoBuild builds the Go packages pkgs (import paths of this module) into
// out, a file for one package or a folder for several, as `go build -o`
// does. TestMain functions, which have no testing.TB, get the error.
func GoBuild(out string, pkgs ...string) error {
	cmd := exec.Command("go", append([]string{"build", "-o", out}, pkgs...)...)
	if output, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", strings.Join(pkgs, " "), err, output)
	}
	return nil
}

// TestServer builds the relay's misbehaving MCP test server into a
// temporary folder and returns its path.
func TestServer(tb testing.TB) string {
	tb.Helper()
	bin := filepath.Join(tb.TempDir(), "testserver")
	if err := GoBuild(bin, "github.com/omnidev/omnidev/internal/relay/testdata/testserver"); err != nil {
		tb.Fatal(err)
	}
	return bin
}

// WaitFor polls cond until it holds, failing t after timeout.
func WaitFor(t testing.TB, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(timeout); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
	}
}

// PrivateConfig points XDG_CONFIG_HOME at a new temporary folder, where
// the key that signs run records and the approvals go, rather than the
// user's: for a TestMain, around m.Run. It returns the function that
// removes the folder.
func PrivateConfig() (remove func()) {
	dir, err := os.MkdirTemp("", "omnidev-config-*")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CONFIG_HOME", dir)
	return func() { os.RemoveAll(dir) }
}

// Snapshot maps every file below root, .git and .omni aside, by slash
// path, to its mode and content ("link <target>" for a symlink): what an
// undo must bring back byte for byte.
func Snapshot(tb testing.TB, root string) map[string]string {
	tb.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		switch {
		case d.IsDir() && (rel == ".git" || rel == ".omni"):
			return filepath.SkipDir
		case d.IsDir():
			return nil
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			files[rel] = "link " + target
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		files[rel] = fi.Mode().String() + " " + string(data)
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return files
}

// SnapshotDiff lists, in path order, the files whose Snapshot entries
// differ between want and got; "" when none does.
func SnapshotDiff(want, got map[string]string) string {
	short := func(s string) string {
		if len(s) > 200 {
			return s[:197] + "..."
		}
		return s
	}
	var b strings.Builder
	for _, p := range slices.Sorted(maps.Keys(want)) {
		if g, ok := got[p]; !ok || g != want[p] {
			fmt.Fprintf(&b, "%s:\n  - %q\n  + %q (present %v)\n", p, short(want[p]), short(g), ok)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[p]; !ok {
			fmt.Fprintf(&b, "%s: not wanted:\n  + %q\n", p, short(got[p]))
		}
	}
	return b.String()
}
