//go:build linux

package server_test

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestRuntimeInRepository is an ordinary user (nobody, when the tests run
// as root) without Bun on PATH: doctor names the install that works for
// them, whether npm's global folder is theirs or not, and once Bun lies
// where `npm install -D bun` puts it, doctor finds it and `omnidev exec`
// runs a program with it, isolated.
func TestRuntimeInRepository(t *testing.T) {
	bun, err := exec.LookPath("bun")
	if err != nil {
		t.Fatal("bun is not on PATH: `just deps` installs it")
	}
	if _, err := exec.LookPath("npm"); err != nil {
		t.Fatal("npm is not on PATH")
	}
	dir, err := os.MkdirTemp("", "omnidev-install-*")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	root := filepath.Join(dir, "repo")
	writeFile(t, root, "omni/config.toml", "[capabilities]\nenable = []\n")
	writeFile(t, root, "prog.ts", "console.log(`bun ${Bun.version}`);\n")
	// The PATH of someone who has Node and npm but no Bun.
	var path []string
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(d, "bun")); err != nil && filepath.IsAbs(d) {
			path = append(path, d)
		}
	}
	asUser := func(env ...string) func(args ...string) (int, string) {
		return func(args ...string) (int, string) {
			t.Helper()
			cmd := exec.CommandContext(t.Context(), binary, append([]string{"--dir", root}, args...)...)
			cmd.Env = append([]string{"PATH=" + strings.Join(path, ":"), "HOME=" + dir}, env...)
			if os.Getuid() == 0 {
				os.Chmod(dir, 0o755)
				filepath.Walk(dir, func(p string, _ os.FileInfo, _ error) error { return os.Lchown(p, 65534, 65534) })
				os.Chmod(filepath.Dir(binary), 0o755)
				cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
			}
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			if cmd.ProcessState == nil {
				t.Fatalf("omnidev %v: %v", args, err)
			}
			return cmd.ProcessState.ExitCode(), out.String()
		}
	}

	t.Run("npm's global folder is not the user's", func(t *testing.T) {
		// /usr: where a system Node's npm installs, root's alone.
		code, out := asUser("NPM_CONFIG_PREFIX=/usr")("doctor")
		for _, want := range []string{
			"bun is neither on PATH nor in " + filepath.Join(root, "node_modules", ".bin"),
			"for you:    run `npm install -D bun` in " + root + " (`npm install -g bun` would fail: /usr/lib/node_modules is not writable by you)",
		} {
			if code != 1 || !strings.Contains(out, want) {
				t.Errorf("doctor: exit %d, want 1 and %q:\n%s", code, want, out)
			}
		}
	})
	t.Run("npm's global folder is the user's", func(t *testing.T) {
		prefix := filepath.Join(dir, ".npm-global")
		code, out := asUser("NPM_CONFIG_PREFIX=" + prefix)("doctor")
		want := "for you:    run `npm install -g bun` (npm's global folder " + prefix + " is writable by you), or `npm install -D bun` in " + root
		if code != 1 || !strings.Contains(out, want) {
			t.Errorf("doctor: exit %d, want 1 and %q:\n%s", code, want, out)
		}
	})

	// What `npm install -D bun` leaves, Bun's binary copied rather than
	// downloaded again (a hard link would be chowned with the repository).
	real, err := filepath.EvalSymlinks(bun)
	if err != nil {
		t.Fatal(err)
	}
	pkg := filepath.Join(root, "node_modules", "bun")
	writeFile(t, pkg, "package.json", `{"name": "bun", "bin": {"bun": "bin/bun.exe"}}`+"\n")
	copyFile(t, real, filepath.Join(pkg, "bin", "bun.exe"))
	if err := os.MkdirAll(filepath.Join(root, "node_modules", ".bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../bun/bin/bun.exe", filepath.Join(root, "node_modules", ".bin", "bun")); err != nil {
		t.Fatal(err)
	}
	run := asUser("NPM_CONFIG_PREFIX=/usr")
	code, out := run("doctor")
	if want := "runtime:      bun in the repository (" + filepath.Join(root, "node_modules", ".bin", "bun") + ")"; code != 0 || !strings.Contains(out, want) {
		t.Errorf("doctor: exit %d, want 0 and %q:\n%s", code, want, out)
	}
	code, out = run("exec", "--json", filepath.Join(root, "prog.ts"))
	if code != 0 || !strings.Contains(out, `"stdout": "bun `) || !strings.Contains(out, `"isolation": "namespaces`) {
		t.Errorf("exec: exit %d, want 0, Bun's version and namespaces:\n%s", code, out)
	}
}

// copyFile copies the executable src to dst.
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
