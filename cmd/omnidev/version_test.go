package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestBuildVersion(t *testing.T) {
	settings := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	const rev = "0123456789abcdef0123456789abcdef01234567"
	for _, tt := range []struct {
		name string
		bi   *debug.BuildInfo
		want string
	}{
		{"no build info", nil, "dev"},
		{"go install module@version", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.0"}}, "v1.2.0"},
		{"pseudo-version holding the revision", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261124150000-0123456789ab"},
			Settings: settings("vcs.revision", rev, "vcs.modified", "false")}, "v0.0.0-20261124150000-0123456789ab"},
		{"pseudo-version of a dirty tree", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261124150000-0123456789ab+dirty"},
			Settings: settings("vcs.revision", rev, "vcs.modified", "true")}, "v0.0.0-20261124150000-0123456789ab+dirty"},
		{"devel with a revision", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"},
			Settings: settings("vcs.revision", rev, "vcs.modified", "true")}, "devel+0123456789ab+dirty"},
		{"devel without VCS", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "dev"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := buildVersion(tt.bi); got != tt.want {
				t.Errorf("buildVersion = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestVersionOfABuild builds the binary from a git repository holding this
// tree, as `go install` in a clone does, and with -ldflags -X main.version,
// and checks what `omnidev version` prints. (A git worktree gets no VCS
// stamp from the go command, hence the copy.)
func TestVersionOfABuild(t *testing.T) {
	repo := copyTree(t)
	gitIn := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		cmd.Dir = repo
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	gitIn("init", "-q")
	gitIn("add", "-A")
	gitIn("commit", "-q", "-m", "tree")
	rev := gitIn("rev-parse", "--short=12", "HEAD")
	for _, tt := range []struct {
		name  string
		flags []string
		want  string
	}{
		{"build info", nil, rev},
		{"ldflags win", []string{"-ldflags", "-X main.version=1.2.3-test"}, "omnidev 1.2.3-test\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			bin := filepath.Join(t.TempDir(), "omnidev")
			build := exec.Command("go", append(append([]string{"build", "-buildvcs=true", "-o", bin}, tt.flags...), "./cmd/omnidev")...)
			build.Dir = repo
			if out, err := build.CombinedOutput(); err != nil {
				t.Fatalf("go build: %v\n%s", err, out)
			}
			out, err := exec.Command(bin, "version").Output()
			if err != nil || !strings.Contains(string(out), tt.want) {
				t.Errorf("omnidev version: %q, %v; want it to hold %q", out, err, tt.want)
			}
		})
	}
}

// copyTree copies the repository's files (tracked and untracked, ignored
// ones aside) into a new folder.
func copyTree(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("git", "ls-files", "-co", "--exclude-standard", "-z")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	dst := t.TempDir()
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		data, err := os.ReadFile(filepath.Join("../..", name))
		if err != nil {
			continue // deleted in the worktree
		}
		p := filepath.Join(dst, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}
