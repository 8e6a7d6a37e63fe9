package main

import (
	"archive/tar"
	"compress/gzip"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestRelease runs `just release`'s script in a tagged copy of this tree, for
// this machine's Linux and for macOS, plus a target that cannot build: the
// two archives hold what an install needs, the version is the tag, the
// checksums verify, a second run gives the same bytes, and the target that
// failed is named and fails the script.
func TestRelease(t *testing.T) {
	repo := copyTree(t)
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", "-A")
	git("commit", "-q", "-m", "tree")
	git("tag", "v0.0.1-test")

	linux, darwin := "linux_"+runtime.GOARCH, "darwin_arm64"
	release := func(targets string) (code int, stdout, stderr string, checksums []byte) {
		t.Helper()
		cmd := exec.Command("bash", "scripts/release.sh")
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "TARGETS="+targets)
		var out, errOut strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		if cmd.ProcessState == nil {
			t.Fatalf("scripts/release.sh: %v", err)
		}
		checksums, _ = os.ReadFile(filepath.Join(repo, "dist", "omnidev_v0.0.1-test_checksums.txt"))
		return cmd.ProcessState.ExitCode(), out.String(), errOut.String(), checksums
	}

	code, stdout, stderr, checksums := release("linux/" + runtime.GOARCH + " nosuchos/amd64 darwin/arm64")
	if code == 0 || !strings.Contains(stderr, "FAILED: nosuchos/amd64") {
		t.Errorf("with a target that cannot build: exit %d, stderr:\n%s\nwant exit 1 and that target named", code, stderr)
	}
	if !strings.Contains(stdout, "omnidev_v0.0.1-test_"+darwin+".tar.gz") {
		t.Errorf("the targets after the failed one were not built:\n%s%s", stdout, stderr)
	}

	dist := filepath.Join(repo, "dist")
	sums := exec.Command("sha256sum", "-c", "omnidev_v0.0.1-test_checksums.txt")
	sums.Dir = dist
	if out, err := sums.CombinedOutput(); err != nil || strings.Count(string(out), ": OK") != 2 {
		t.Errorf("sha256sum -c: %v\n%s", err, out)
	}

	for _, tt := range []struct {
		target string
		want   []string
	}{
		{linux, []string{"LICENSE", "README.md", "omnidev", "omnidev-sandbox"}},
		{darwin, []string{"LICENSE", "README.md", "omnidev"}},
	} {
		name := "omnidev_v0.0.1-test_" + tt.target
		got := untar(t, filepath.Join(dist, name+".tar.gz"), filepath.Join(t.TempDir(), tt.target))
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s.tar.gz holds %q, want %q", name, got, tt.want)
		}
	}
	extracted := filepath.Join(t.TempDir(), "x")
	untar(t, filepath.Join(dist, "omnidev_v0.0.1-test_"+linux+".tar.gz"), extracted)
	out, err := exec.Command(filepath.Join(extracted, "omnidev_v0.0.1-test_"+linux, "omnidev"), "version").Output()
	if err != nil || !strings.Contains(string(out), "omnidev v0.0.1-test") {
		t.Errorf("omnidev version from the archive: %q, %v; want the tag", out, err)
	}

	code, _, stderr, again := release("linux/" + runtime.GOARCH)
	if code != 0 {
		t.Fatalf("second release: exit %d\n%s", code, stderr)
	}
	if line := firstLine(again); !strings.Contains(string(checksums), line) {
		t.Errorf("a second build of the same commit differs:\nfirst:\n%s\nsecond:\n%s", checksums, again)
	}
}

// untar extracts a .tar.gz into dir and returns the base names of its
// files, in order.
func untar(t *testing.T, archive, dir string) []string {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		if h.Typeflag == tar.TypeDir {
			os.MkdirAll(p, 0o755)
			continue
		}
		names = append(names, filepath.Base(h.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, os.FileMode(h.Mode)); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(names)
	return names
}

func firstLine(b []byte) string {
	line, _, _ := strings.Cut(string(b), "\n")
	return line
}
