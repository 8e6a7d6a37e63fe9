package execute

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/omnidev/omnidev/internal/capability"
	"github.com/omnidev/omnidev/internal/sandbox"
)

// requireBun returns the path of Bun. The tests run the real runtime and CI
// installs it: its absence is a failure, never a skip.
func requireBun(tb testing.TB) string {
	tb.Helper()
	p, err := exec.LookPath("bun")
	if err != nil {
		tb.Fatalf("bun is required by these tests (npm install -g bun): %v", err)
	}
	return p
}

// writeFiles writes files (slash paths relative to root) with their content.
func writeFiles(tb testing.TB, root string, files map[string]string) {
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

// gitEnv keeps the developer's git configuration out of the tests' git
// commands (signing, hooks, templates...).
var gitEnv = []string{
	"GIT_CONFIG_GLOBAL=/dev/null",
	"GIT_CONFIG_NOSYSTEM=1",
	"GIT_AUTHOR_NAME=omnidev test", "GIT_AUTHOR_EMAIL=test@example.com",
	"GIT_COMMITTER_NAME=omnidev test", "GIT_COMMITTER_EMAIL=test@example.com",
}

// git runs the git CLI in dir.
func runGit(tb testing.TB, dir string, args ...string) string {
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

// gitRepo creates a repository at a new temporary root holding files,
// all committed.
func gitRepo(tb testing.TB, files map[string]string) string {
	tb.Helper()
	root := tb.TempDir()
	writeFiles(tb, root, files)
	runGit(tb, root, "init", "-q", "-b", "main")
	runGit(tb, root, "add", "-A")
	runGit(tb, root, "commit", "-q", "--allow-empty", "-m", "initial")
	// The index was written in the same second as the files: make them
	// older, as in any repository not committed this instant, so the tests
	// see clean files as clean (the racy case has tests of its own).
	ageIndexedFiles(tb, root)
	return root
}

// ageIndexedFiles sets every file's mtime a minute back and refreshes the
// index so it records them.
func ageIndexedFiles(tb testing.TB, root string) {
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
	runGit(tb, root, "update-index", "-q", "--refresh")
}

// prepare builds the sandbox of root with the given capabilities.
func prepare(tb testing.TB, root string, caps ...*capability.Capability) *sandbox.Sandbox {
	tb.Helper()
	sb, err := sandbox.Prepare(root, &capability.Registry{Root: root, Capabilities: caps})
	if err != nil {
		tb.Fatal(err)
	}
	return sb
}

// request returns a request for code with the defaults of these tests:
// Bun, network on, PATH passed so programs can start commands.
func request(sb *sandbox.Sandbox, code string) Request {
	return Request{
		Code:           code,
		Sandbox:        sb,
		Runtime:        "bun",
		Env:            []string{"PATH=" + os.Getenv("PATH")},
		Timeout:        20 * time.Second,
		MaxOutputBytes: 64 << 10,
		Network:        true,
	}
}
