//go:build unix

package execute

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestRunLockSymlink: a clone's .omni/run.lock that is a symlink out of
// the repository is not followed: no file is created where it leads.
func TestRunLockSymlink(t *testing.T) {
	root, elsewhere := t.TempDir(), t.TempDir()
	os.Mkdir(filepath.Join(root, ".omni"), 0o755)
	target := filepath.Join(elsewhere, "created")
	if err := os.Symlink(target, filepath.Join(root, ".omni", "run.lock")); err != nil {
		t.Fatal(err)
	}
	l := runLock{path: filepath.Join(root, ".omni", "run.lock")}
	if unlock, err := l.lock(context.Background()); err == nil {
		unlock()
	}
	if _, err := os.Lstat(target); err == nil {
		t.Error("the run lock created a file where the symlink .omni/run.lock led")
	}
}
