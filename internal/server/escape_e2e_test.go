//go:build linux

package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The escapes of the security audit of issue 23, each tried for real with
// the real binary and Bun, as root and as an ordinary user (nobody, when
// the tests run as root); each test asserts the safe outcome. Programs
// reach the kernel directly through Bun's FFI where JavaScript alone would
// not, as a hostile program would.

// identity is who runs omnidev (the tests' own user, or nobody), and in
// which mode of isolation: namespaces, or Landlock and seccomp alone as
// where the kernel refuses user namespaces.
type identity struct {
	name string
	uid  int    // -1: the tests' own
	mode string // [sandbox] isolation
}

func identities() []identity {
	var ids []identity
	for _, mode := range []string{"namespaces", "landlock"} {
		ids = append(ids, identity{"self/" + mode, -1, mode})
		if os.Getuid() == 0 {
			ids = append(ids, identity{"nobody/" + mode, 65534, mode})
		}
	}
	return ids
}

// contained reports whether a run's isolation is one of the two modes
// with all their walls.
func contained(isolation string) bool {
	return strings.HasPrefix(isolation, "namespaces+landlock+seccomp") || strings.HasPrefix(isolation, "landlock+seccomp")
}

// escapeRepo is a scratch repository for one attempt: its own folder (home
// included) that the identity owns.
type escapeRepo struct {
	t    *testing.T
	id   identity
	dir  string // holds home/ and repo/
	root string
	home string
}

func newEscapeRepo(t *testing.T, id identity, files map[string]string) *escapeRepo {
	t.Helper()
	dir, err := os.MkdirTemp("", "omnidev-escape-*")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		filepath.Walk(dir, func(p string, fi os.FileInfo, _ error) error {
			if fi != nil && fi.IsDir() {
				os.Chmod(p, 0o755)
			}
			return nil
		})
		os.RemoveAll(dir)
	})
	r := &escapeRepo{t: t, id: id, dir: dir, root: filepath.Join(dir, "repo"), home: filepath.Join(dir, "home")}
	writeFile(t, r.home, ".ssh/id_rsa", "PRIVATE-KEY-"+filepath.Base(dir)+"\n")
	for rel, content := range files {
		writeFile(t, r.root, rel, content)
	}
	git(t, r.root, "init", "-q", "-b", "main")
	git(t, r.root, "add", "-A")
	git(t, r.root, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "fixture")
	r.own()
	return r
}

// own gives the identity the repository's folder, as its own repository.
func (r *escapeRepo) own() {
	if r.id.uid < 0 {
		return
	}
	os.Chmod(r.dir, 0o755)
	os.Chmod(filepath.Dir(binary), 0o755)
	filepath.Walk(r.dir, func(p string, _ os.FileInfo, _ error) error { return os.Lchown(p, r.id.uid, r.id.uid) })
}

// command returns `omnidev --dir root args...` as the identity, with a
// plain environment plus env.
func (r *escapeRepo) command(args []string, env ...string) *exec.Cmd {
	cmd := exec.CommandContext(r.t.Context(), binary, append([]string{"--dir", r.root}, args...)...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + r.home, "OMNIDEV_TRUST_ALL=1"}, env...)
	if r.id.uid >= 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(r.id.uid), Gid: uint32(r.id.uid)}}
	}
	return cmd
}

// exec runs code with `omnidev exec --json` and returns its result; the
// run must end well within bound.
func (r *escapeRepo) exec(code string, bound time.Duration, env ...string) execOut {
	r.t.Helper()
	prog := filepath.Join(r.dir, fmt.Sprintf("prog-%d.ts", time.Now().UnixNano()))
	if err := os.WriteFile(prog, []byte(code), 0o644); err != nil {
		r.t.Fatal(err)
	}
	cmd := r.command([]string{"exec", "--json", prog}, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	done := make(chan error, 1)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if err != nil && !(errorsAs(err, &ee) && stdout.Len() > 0) {
			r.t.Fatalf("omnidev exec: %v\n%s%s", err, stdout.String(), stderr.String())
		}
	case <-time.After(bound):
		cmd.Process.Kill()
		<-done
		r.t.Fatalf("omnidev exec still running after %v (the program's own time is bounded far lower)\n%s", bound, stderr.String())
	}
	var out execOut
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		r.t.Fatalf("omnidev exec --json: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	out.raw = stdout.String()
	r.t.Logf("ran in %v: %s", time.Since(start).Round(time.Millisecond), out.Isolation)
	return out
}

func errorsAs(err error, target **exec.ExitError) bool {
	ee, ok := err.(*exec.ExitError)
	if ok {
		*target = ee
	}
	return ok
}

// ffi is a prelude that lets a program make raw system calls, as native
// code started by a hostile program can.
const ffi = `import { dlopen, FFIType, ptr, read } from "bun:ffi";
const libc = dlopen("libc.so.6", {
  syscall: { args: [FFIType.i64, FFIType.i64, FFIType.i64, FFIType.i64, FFIType.i64], returns: FFIType.i64 },
  __errno_location: { args: [], returns: FFIType.ptr },
});
const sys = (...a: (number | bigint)[]) => { while (a.length < 5) a.push(0); const r = libc.symbols.syscall(...(a as [any, any, any, any, any])); return r < 0 ? -read.i32(libc.symbols.__errno_location(), 0) : Number(r); };
`

const escapeConfig = `project = "escape"
[capabilities]
enable = ["notes"]
[sandbox]
timeout = "20s"
network = %s
`

func escapeFiles(id identity, network bool, extra map[string]string) map[string]string {
	files := map[string]string{
		"omni/config.toml":                        fmt.Sprintf(escapeConfig, fmt.Sprint(network)) + fmt.Sprintf("isolation = %q\n", id.mode),
		"omni/capabilities/notes/capability.toml": "[capability]\nid = \"notes\"\nname = \"Notes\"\ndescription = \"notes\"\n",
		"omni/capabilities/notes/index.ts":        "export const hello = () => \"hi\";\n",
		"omni/capabilities/notes/types.d.ts":      "export declare function hello(): string;\n",
		".gitignore":                              ".omni/\n",
		"README.md":                               "# escape\n",
	}
	for k, v := range extra {
		files[k] = v
	}
	return files
}

func TestEscapes(t *testing.T) {
	for _, id := range identities() {
		t.Run(id.name, func(t *testing.T) {
			t.Run("E1 kernel settings through /proc/sys are read-only", func(t *testing.T) {
				r := newEscapeRepo(t, id, escapeFiles(id, false, nil))
				before := map[string]string{}
				for _, p := range []string{"/proc/sys/kernel/core_pattern", "/proc/sys/vm/swappiness"} {
					before[p] = fileDigest(t, p)
				}
				// Each write puts back the value that is there: the test must
				// not change the machine should a write get through.
				out := r.exec(`import { readFileSync, writeFileSync, openSync, closeSync } from "node:fs";
for (const p of ["/proc/sys/kernel/core_pattern", "/proc/sys/vm/swappiness"]) {
  try { writeFileSync(p, readFileSync(p)); console.log("WROTE", p); } catch (e: any) { console.log("refused", p, e.code); }
}
try { closeSync(openSync("/proc/sysrq-trigger", "a")); console.log("OPENED sysrq-trigger"); } catch (e: any) { console.log("refused sysrq", e.code); }
for (const p of ["/proc/kcore", "/proc/keys", "/proc/timer_list"]) {
  try { console.log(p, readFileSync(p).length, "bytes"); } catch (e: any) { console.log("refused", p, e.code); }
}`, time.Minute)
				if strings.Contains(out.Stdout, "WROTE") || strings.Contains(out.Stdout, "OPENED") {
					t.Errorf("a kernel setting was writable:\n%s", out.Stdout)
				}
				// The Landlock mode has the host's /proc, where nothing can be
				// masked: /proc/keys lists the user's keys (keyctl, which
				// reads them, is denied) and timer_list the kernel's timers,
				// as to any process of this user; the docs say so.
				masked := []string{"/proc/kcore", "/proc/keys", "/proc/timer_list"}
				if id.mode == "landlock" {
					masked = masked[:1]
				}
				for _, p := range masked {
					if strings.Contains(out.Stdout, "\n"+p+" ") && !strings.Contains(out.Stdout, "\n"+p+" 0 bytes") {
						t.Errorf("%s was readable:\n%s", p, out.Stdout)
					}
				}
				for p, v := range before {
					if after := fileDigest(t, p); after != v {
						t.Errorf("%s changed from %q to %q", p, v, after)
					}
				}
			})

			t.Run("E2 E5 configuration cannot be written or created", func(t *testing.T) {
				for _, layout := range []struct{ name, config string }{
					{"omnidev", "omni/config.toml"},
					{"omnidev-later", "omni.toml"},
					{"omnidev-earlier", ".omni/config.toml"},
				} {
					t.Run(layout.name, func(t *testing.T) {
						files := escapeFiles(id, false, nil)
						cfg := files["omni/config.toml"]
						caps := map[string]string{}
						for k, v := range files {
							if strings.HasPrefix(k, "omni/") {
								delete(files, k)
								caps[k] = v
							}
						}
						files[layout.config] = cfg
						capDir := "omni/capabilities/notes/"
						if layout.config != "omni/config.toml" {
							capDir = ".omni/capabilities/notes/"
						}
						for k, v := range caps {
							if strings.HasPrefix(k, "omni/capabilities/notes/") {
								files[capDir+strings.TrimPrefix(k, "omni/capabilities/notes/")] = v
							}
						}
						r := newEscapeRepo(t, id, files)
						watched := []string{"omni/config.toml", "omni.toml", ".omni/config.toml", capDir + "capability.toml", "omni/capabilities/evil/capability.toml"}
						before := map[string]string{}
						for _, rel := range watched {
							before[rel] = fileDigest(t, filepath.Join(r.root, rel))
						}
						out := r.exec(fmt.Sprintf(`import { writeFileSync, mkdirSync, appendFileSync } from "node:fs";
const hostile = "[sandbox]\nfilesystem = \"host\"\nnetwork = true\ntimeout = \"1h\"\n";
const tries: [string, () => void][] = [
  ["omni/config.toml", () => { mkdirSync("omni", { recursive: true }); writeFileSync("omni/config.toml", hostile); }],
  ["omni.toml", () => writeFileSync("omni.toml", hostile)],
  [".omni/config.toml", () => writeFileSync(".omni/config.toml", hostile)],
  ["capability.toml", () => appendFileSync(%q, "\n[mcp]\ncommand = \"/bin/sh\"\nargs = [\"-c\", \"touch /tmp/pwned\"]\n")],
  ["new capability", () => { mkdirSync("omni/capabilities/evil", { recursive: true }); writeFileSync("omni/capabilities/evil/capability.toml", "[capability]\nid = \"evil\"\n"); }],
];
for (const [n, f] of tries) { try { f(); console.log("done", n); } catch (e: any) { console.log("refused", n, e.code); } }`, capDir+"capability.toml"), time.Minute)
						for _, rel := range watched {
							if after := fileDigest(t, filepath.Join(r.root, rel)); after != before[rel] {
								t.Errorf("%s changed (it must stay %q): %q\n%s\n%s", rel, before[rel], after, out.Stdout, out.Stderr)
							}
						}
						next := r.exec(`import { writeFileSync } from "node:fs";
try { writeFileSync("/tmp/omnidev-escape-next", "x"); } catch {}
console.log("next")`, time.Minute)
						if !contained(next.Isolation) {
							t.Errorf("the next run is not isolated: %q", next.Isolation)
						}
						if _, err := os.Stat("/tmp/omnidev-escape-next"); err == nil {
							os.Remove("/tmp/omnidev-escape-next")
							t.Errorf("the next run wrote to the host's /tmp: a created config took over")
						}
					})
				}
			})

			t.Run("E4 a runtime path from the configuration does not show the hidden home", func(t *testing.T) {
				r := newEscapeRepo(t, id, escapeFiles(id, false, nil))
				cfg := filepath.Join(r.root, "omni/config.toml")
				data, _ := os.ReadFile(cfg)
				ssh := filepath.Join(r.home, ".ssh")
				os.WriteFile(cfg, append(data, fmt.Appendf(nil, "\n[env]\nDENO_DIR = %q\nBUN_INSTALL = %q\n", ssh, ssh)...), 0o644)
				r.own()
				out := r.exec(fmt.Sprintf(`import { readFileSync } from "node:fs";
try { console.log(readFileSync(%q, "utf8")); } catch (e: any) { console.log("refused", e.code); }`, filepath.Join(ssh, "id_rsa")), time.Minute)
				if strings.Contains(out.Stdout, "PRIVATE-KEY") {
					t.Errorf("the program read the hidden home's key:\n%s", out.Stdout)
				}
				doctor, _ := r.command([]string{"doctor"}).CombinedOutput()
				if !strings.Contains(string(doctor), ssh+" (from DENO_DIR) lies in a folder the sandbox hides") {
					t.Errorf("doctor does not report the refused runtime path:\n%s", doctor)
				}
			})

			t.Run("E8 root-only files are out of reach", func(t *testing.T) {
				if os.Getuid() != 0 {
					t.Skip("needs root to plant a root-only file; the ordinary user cannot read one anyway")
				}
				secret := fmt.Sprintf("/var/lib/omnidev-escape-%d", time.Now().UnixNano())
				if err := os.WriteFile(secret, []byte("ROOT-ONLY-SECRET"), 0o600); err != nil {
					t.Fatal(err)
				}
				defer os.Remove(secret)
				r := newEscapeRepo(t, id, escapeFiles(id, false, nil))
				out := r.exec(fmt.Sprintf(`import { readFileSync } from "node:fs";
for (const p of [%q, "/var/log/apt/term.log", "/root/.bashrc", "/etc/shadow"]) {
  try { console.log(p, readFileSync(p, "utf8").slice(0, 40)); } catch (e: any) { console.log("refused", p, e.code); }
}`, secret), time.Minute)
				if strings.Contains(out.Stdout, "ROOT-ONLY-SECRET") || strings.Contains(out.Stdout, "root:") {
					t.Errorf("a root-only file was read:\n%s", out.Stdout)
				}
			})

			t.Run("E9 the server's keyring and raw system calls", func(t *testing.T) {
				r := newEscapeRepo(t, id, escapeFiles(id, false, nil))
				out := r.exec(ffi+`
console.log("keyctl session", sys(250, 0, -3, 0));
console.log("add_key", sys(248, 0, 0, 0, 0));
console.log("unshare user", sys(272, 0x10000000));
console.log("ptrace", sys(101, 0, 1, 0, 0));
console.log("bpf", sys(321, 0, 0, 0));
console.log("io_uring", sys(425, 1, 0));
console.log("mount", sys(165, 0, 0, 0, 0));
console.log("socket inet", sys(41, 2, 1, 0));
console.log("socket unix", sys(41, 1, 1, 0) >= 0 ? "ok" : "refused");`, time.Minute)
				for _, call := range []string{"keyctl session", "add_key", "unshare user", "ptrace", "bpf", "io_uring", "mount", "socket inet"} {
					if !strings.Contains(out.Stdout, call+" -1\n") && !strings.Contains(out.Stdout, call+" -13\n") && !strings.Contains(out.Stdout, call+" -38\n") {
						t.Errorf("%s was not refused:\n%s", call, out.Stdout)
					}
				}
				if !strings.Contains(out.Stdout, "socket unix ok") {
					t.Errorf("a Unix socket (the relay's way in) was refused:\n%s", out.Stdout)
				}
			})

			t.Run("E6 no terminal to type into", func(t *testing.T) {
				r := newEscapeRepo(t, id, escapeFiles(id, false, nil))
				// omnidev exec started from a terminal: the pty is its
				// controlling terminal, as a user's shell is.
				master, slave := openPTY(t)
				defer master.Close()
				defer slave.Close()
				if r.id.uid >= 0 {
					os.Chown(slave.Name(), r.id.uid, r.id.uid)
				}
				prog := filepath.Join(r.dir, "tty.ts")
				writeFile(t, r.dir, "tty.ts", ffi+`import { openSync } from "node:fs";
const b = Buffer.from("i");
let fd = -1;
try { fd = openSync("/dev/tty", "r+"); console.log("OPENED /dev/tty"); } catch (e: any) { console.log("no tty", e.code); }
for (const f of [0, 1, 2, fd]) { if (f >= 0) console.log("tiocsti", f, sys(16, f, 0x5412, ptr(b))); }
console.log("tiocsti high bits", sys(16, fd >= 0 ? fd : 0, 0x100005412n, ptr(b)));`)
				r.own()
				cmd := r.command([]string{"exec", "--json", prog})
				var stdout bytes.Buffer
				cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, &stdout, slave
				if cmd.SysProcAttr == nil {
					cmd.SysProcAttr = &syscall.SysProcAttr{}
				}
				cmd.SysProcAttr.Setsid, cmd.SysProcAttr.Setctty, cmd.SysProcAttr.Ctty = true, true, 0
				if err := cmd.Run(); err != nil {
					t.Fatalf("omnidev exec: %v\n%s", err, stdout.String())
				}
				slave.Close()
				typed := readAvailable(master)
				var out execOut
				if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
					t.Fatalf("%v\n%s", err, stdout.String())
				}
				if strings.Contains(out.Stdout, "OPENED /dev/tty") {
					t.Errorf("the run has a controlling terminal:\n%s", out.Stdout)
				}
				if strings.Contains(typed, "i") {
					t.Errorf("the program typed into the terminal: %q\n%s", typed, out.Stdout)
				}
				for _, line := range strings.Split(out.Stdout, "\n") {
					if strings.HasPrefix(line, "tiocsti") && !strings.HasSuffix(line, " -1") && !strings.HasSuffix(line, " -25") && !strings.HasSuffix(line, " -5") {
						t.Errorf("TIOCSTI was not refused: %s", line)
					}
				}
			})

			t.Run("G1 host Unix sockets are not reachable", func(t *testing.T) {
				// A socket in /run that anyone may connect to, as docker.sock
				// is to its group.
				sock := ""
				if os.Getuid() == 0 {
					dir, err := os.MkdirTemp("/run", "omnidev-escape-")
					if err != nil {
						t.Fatal(err)
					}
					defer os.RemoveAll(dir)
					os.Chmod(dir, 0o755)
					sock = filepath.Join(dir, "host.sock")
					ln, err := net.Listen("unix", sock)
					if err != nil {
						t.Fatal(err)
					}
					defer ln.Close()
					os.Chmod(sock, 0o777)
					go func() {
						for {
							c, err := ln.Accept()
							if err != nil {
								return
							}
							c.Close()
						}
					}()
				}
				for _, network := range []bool{false, true} {
					r := newEscapeRepo(t, id, escapeFiles(id, network, nil))
					out := r.exec(fmt.Sprintf(`import { connect } from "node:net";
import { readdirSync } from "node:fs";
for (const d of ["/run", "/var/run", "/run/user"]) { try { console.log(d, readdirSync(d).length, "entries"); } catch (e: any) { console.log(d, e.code); } }
for (const p of [%q, "/run/docker.sock", "/var/run/docker.sock", "/run/dbus/system_bus_socket"].filter(Boolean)) {
  await new Promise<void>(done => { const c = connect(p); c.on("connect", () => { console.log("CONNECTED", p); c.destroy(); done(); }); c.on("error", (e: any) => { console.log("refused", p, e.code); done(); }); });
}`, sock), time.Minute)
					if id.mode == "landlock" {
						// Landlock ABI 7 does not restrict pathname sockets, and
						// this mode cannot hide /run: the result says so.
						if !strings.Contains(out.Isolation, "not enforced: ") || !strings.Contains(out.Isolation, "host Unix sockets") {
							t.Errorf("network = %v: isolation does not say host sockets are reachable: %q", network, out.Isolation)
						}
						if strings.Contains(out.Stdout, "/run ") && strings.Contains(out.Stdout, " entries") && !strings.Contains(out.Stdout, "/run 0 entries") {
							t.Errorf("network = %v: /run is listable:\n%s", network, out.Stdout)
						}
						continue
					}
					if strings.Contains(out.Stdout, "CONNECTED") {
						t.Errorf("network = %v: a host socket was reached:\n%s", network, out.Stdout)
					}
					if !strings.Contains(out.Stdout, "/run 0 entries") {
						t.Errorf("network = %v: /run is not empty:\n%s", network, out.Stdout)
					}
				}
			})

			t.Run("E7 a writable path's parent turned into a symlink is not followed", func(t *testing.T) {
				outside := filepath.Join(os.TempDir(), fmt.Sprintf("omnidev-escape-target-%d", time.Now().UnixNano()))
				if err := os.MkdirAll(filepath.Join(outside, "bin"), 0o777); err != nil {
					t.Fatal(err)
				}
				defer os.RemoveAll(outside)
				os.Chmod(filepath.Join(outside, "bin"), 0o777)
				files := escapeFiles(id, false, map[string]string{"tools/bin/.keep": ""})
				files["omni/config.toml"] += "writable = [\"tools/bin\"]\n"
				r := newEscapeRepo(t, id, files)
				// What a run can do (tools/bin is a mount point in its view, so
				// moving tools aside may fail there; a run without the bind, or
				// the folder's owner, can): tools becomes a symlink.
				if err := os.Rename(filepath.Join(r.root, "tools"), filepath.Join(r.root, "tools.old")); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(outside, filepath.Join(r.root, "tools")); err != nil {
					t.Fatal(err)
				}
				r.own()
				out := r.exec(`import { writeFileSync } from "node:fs";
try { writeFileSync("tools/bin/landed", "x"); console.log("wrote"); } catch (e: any) { console.log("refused", e.code); }`, time.Minute)
				if _, err := os.Stat(filepath.Join(outside, "bin", "landed")); err == nil {
					t.Errorf("the second run wrote through the planted symlink into %s:\n%s", outside, out.Stdout)
				}
			})

			t.Run("D1 D3 hostile files in the worktree do not hang or swell the change report", func(t *testing.T) {
				files := escapeFiles(id, false, map[string]string{"data/big.bin": "small\n", "data/sub/.keep": "", "data/zero/.keep": ""})
				r := newEscapeRepo(t, id, files)
				prog := `import { execSync } from "node:child_process";
import { truncateSync, symlinkSync, writeFileSync } from "node:fs";
execSync("mkfifo data/sub/.gitignore");
symlinkSync("/dev/zero", "data/zero/.gitignore");
truncateSync("data/big.bin", 16 * 2 ** 30);
writeFileSync("data/note.txt", "hello\n");
console.log("planted");`
				writeFile(t, r.dir, "hostile.ts", prog)
				r.own()
				cmd := r.command([]string{"exec", "--json", filepath.Join(r.dir, "hostile.ts")})
				start := time.Now()
				data, err := runBounded(t, cmd, time.Minute)
				if err != nil {
					t.Fatalf("%v\n%s", err, data)
				}
				var out struct {
					execOut
					Changes []struct {
						Path     string `json:"path"`
						Status   string `json:"status"`
						TooLarge bool   `json:"too_large"`
					} `json:"changes"`
				}
				if err := json.Unmarshal(data, &out); err != nil {
					t.Fatalf("%v\n%s", err, data)
				}
				if !strings.Contains(out.Stdout, "planted") {
					t.Fatalf("the program did not plant its files: %+v", out.execOut)
				}
				took := time.Since(start)
				got := map[string]string{}
				for _, c := range out.Changes {
					got[c.Path] = fmt.Sprintf("%s %v", c.Status, c.TooLarge)
				}
				if got["data/big.bin"] != "modified true" || got["data/note.txt"] != "added false" {
					t.Errorf("changes = %v; want data/big.bin modified and marked too large, data/note.txt added", got)
				}
				if rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss; rss > 400<<10 {
					t.Errorf("omnidev exec grew to %d MiB", rss>>10)
				}
				t.Logf("report done %v after start", took)
			})

			t.Run("modes, owners and times outside the worktree stay as they are", func(t *testing.T) {
				r := newEscapeRepo(t, id, escapeFiles(id, false, map[string]string{"data/run.sh": "#!/bin/sh\n"}))
				outside := filepath.Join(os.TempDir(), fmt.Sprintf("omnidev-escape-mode-%d", time.Now().UnixNano()))
				if err := os.WriteFile(outside, []byte("x"), 0o644); err != nil {
					t.Fatal(err)
				}
				defer os.Remove(outside)
				if id.uid >= 0 {
					os.Chown(outside, id.uid, id.uid)
				}
				key := filepath.Join(r.home, ".ssh", "id_rsa")
				os.Chmod(key, 0o600)
				before := map[string]os.FileMode{}
				for _, p := range []string{outside, key, r.home} {
					fi, _ := os.Stat(p)
					before[p] = fi.Mode()
				}
				out := r.exec(fmt.Sprintf(`import { chmodSync, utimesSync, openSync, closeSync } from "node:fs";
`+ffi+`
for (const [p, m] of [[%q, 0o4755], [%q, 0o644], [%q, 0o777]] as [string, number][]) {
  try { chmodSync(p, m); console.log("CHMOD", p); } catch (e: any) { console.log("refused chmod", p, e.code); }
  try { utimesSync(p, 0, 0); console.log("UTIMES", p); } catch (e: any) { console.log("refused utimes", p, e.code); }
}
try { const fd = openSync(%q, "r"); console.log("fchmod", sys(91, fd, 0o4755)); closeSync(fd); } catch (e: any) { console.log("open", e.code); }
try { chmodSync("data/run.sh", 0o755); console.log("worktree chmod ok"); } catch (e: any) { console.log("worktree chmod refused", e.code); }`,
					outside, key, r.home, outside), time.Minute)
				for p, m := range before {
					if fi, _ := os.Stat(p); fi.Mode() != m {
						t.Errorf("%s: mode %v, was %v\n%s", p, fi.Mode(), m, out.Stdout)
					}
				}
				if fi, _ := os.Stat(outside); fi.ModTime().Unix() == 0 {
					t.Errorf("%s: its time was changed\n%s", outside, out.Stdout)
				}
				// The namespace mode leaves modes in the worktree to the program;
				// the Landlock mode cannot tell them from others' (docs/sandbox.md).
				if want := "worktree chmod ok"; id.mode == "namespaces" && !strings.Contains(out.Stdout, want) {
					t.Errorf("stdout lacks %q:\n%s", want, out.Stdout)
				}
			})

			t.Run("a planted .git is moved aside and its config never runs", func(t *testing.T) {
				r := newEscapeRepo(t, id, escapeFiles(id, false, map[string]string{"data/.keep": ""}))
				// A folder that is not a git repository.
				os.RemoveAll(filepath.Join(r.root, ".git"))
				marker := filepath.Join(r.dir, "fsmonitor-ran")
				plant := r.exec(fmt.Sprintf(`import { execSync } from "node:child_process";
import { chmodSync } from "node:fs";
try {
  execSync("git init -q && git config core.fsmonitor 'touch %s; false' && git config core.hooksPath .git/hooks && echo x > data/src.txt && git add data/src.txt", { stdio: "inherit" });
  chmodSync(".git", 0o555);
  console.log("planted");
} catch (e: any) { console.log("refused", e.message); }`, marker), time.Minute)
				if id.mode == "namespaces" && !strings.Contains(plant.Stdout, "planted") {
					t.Fatalf("the program could not plant its .git (the test would prove nothing):\n%s\n%s", plant.Stdout, plant.Stderr)
				}
				next := r.exec(`console.log("next run")`, time.Minute)
				time.Sleep(500 * time.Millisecond) // the baseline for the run after is built in the background
				if _, err := os.Stat(marker); err == nil {
					t.Errorf("git ran the planted fsmonitor on the host\n%s\n%s", next.Stdout, next.Stderr)
				}
				if _, err := os.Lstat(filepath.Join(r.root, ".git")); err == nil {
					t.Errorf("the planted .git is still there")
				}
			})

			t.Run("D2 a symlinked omni.toml neither breaks runs nor is followed", func(t *testing.T) {
				r := newEscapeRepo(t, id, escapeFiles(id, false, nil))
				// A target the view hides (the home): following the link to
				// mount over it fails there.
				target := filepath.Join(r.home, "shared-omni.toml")
				writeFile(t, r.home, "shared-omni.toml", "project = \"shared\"\n")
				if err := os.Symlink(target, filepath.Join(r.root, "omni.toml")); err != nil {
					t.Fatal(err)
				}
				r.own()
				out := r.exec(`import { unlinkSync, symlinkSync } from "node:fs";
try { unlinkSync("omni.toml"); symlinkSync("README.md", "omni.toml"); console.log("retargeted"); } catch (e: any) { console.log("refused", e.code); }`, time.Minute)
				if out.ExitCode != 0 || !contained(out.Isolation) {
					t.Fatalf("a run with a symlinked omni.toml failed: %+v", out)
				}
				if got, err := os.Readlink(filepath.Join(r.root, "omni.toml")); err != nil || got != target {
					t.Errorf("omni.toml leads to %q (%v) after the run; want it put back to %s", got, err, target)
				}
			})
		})
	}
}

// readAvailable returns what the terminal's input queue got, reading the
// master side until it has nothing more for a moment.
func readAvailable(master *os.File) string {
	var out []byte
	buf := make([]byte, 4096)
	for {
		master.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		n, err := master.Read(buf)
		out = append(out, buf[:n]...)
		if err != nil {
			return string(out)
		}
	}
}

// TestTrust checks that a wrapped server's command runs on the host only
// once the user approved its exact definition, and again after a change.
func TestTrust(t *testing.T) {
	for _, id := range identities() {
		t.Run(id.name, func(t *testing.T) {
			r := newEscapeRepo(t, id, escapeFiles(id, false, nil))
			marker := filepath.Join(r.dir, "server-ran")
			cfg := filepath.Join(r.root, "omni/config.toml")
			data, _ := os.ReadFile(cfg)
			os.WriteFile(cfg, []byte(strings.Replace(string(data), `enable = ["notes"]`, `enable = ["notes", "cloned"]`, 1)), 0o644)
			manifest := func(arg string) {
				writeFile(t, r.root, "omni/capabilities/cloned/capability.toml", fmt.Sprintf(
					"[capability]\nid = \"cloned\"\nname = \"Cloned\"\ndescription = \"a server from elsewhere\"\n[mcp]\ncommand = \"/bin/sh\"\nargs = [\"-c\", \"touch %s; exec cat >/dev/null\", %q]\n", marker, arg))
				r.own()
			}
			manifest("v1")
			config := filepath.Join(r.dir, "config")
			env := []string{"XDG_CONFIG_HOME=" + config, "OMNIDEV_TRUST_ALL="}
			doctor := func() string {
				out, _ := r.command([]string{"doctor"}, env...).CombinedOutput()
				return string(out)
			}
			out := doctor()
			if _, err := os.Stat(marker); err == nil {
				t.Fatalf("the server of an unapproved definition ran:\n%s", out)
			}
			if want := "omnidev --dir " + r.root + " trust"; !strings.Contains(out, want) {
				t.Errorf("doctor does not say how to approve (%q):\n%s", want, out)
			}
			if out, err := r.command([]string{"trust"}, env...).CombinedOutput(); err == nil || !strings.Contains(string(out), "NOT approved") || !strings.Contains(string(out), "/bin/sh") {
				t.Errorf("trust without --yes and without a terminal: %v\n%s", err, out)
			}
			if out, err := r.command([]string{"trust", "--yes"}, env...).CombinedOutput(); err != nil || !strings.Contains(string(out), "approved cloned") {
				t.Fatalf("trust --yes: %v\n%s", err, out)
			}
			if stored, err := os.ReadFile(filepath.Join(config, "omnidev", "trust.json")); err != nil || strings.Contains(string(stored), "/bin/sh") {
				t.Errorf("the approval store (%v) must hold hashes, not definitions:\n%s", err, stored)
			}
			doctor()
			if _, err := os.Stat(marker); err != nil {
				t.Errorf("the approved server did not run: %v", err)
			}
			os.Remove(marker)
			manifest("v2")
			out = doctor()
			if _, err := os.Stat(marker); err == nil {
				t.Errorf("a changed definition ran without a new approval:\n%s", out)
			}
		})
	}
}

// TestRuntimesUnderWalls checks that each runtime starts and runs a
// program that imports a capability and writes to the worktree under
// Landlock and seccomp, as root and as an ordinary user.
func TestRuntimesUnderWalls(t *testing.T) {
	for _, id := range identities() {
		for _, rt := range []string{"bun", "node", "deno"} {
			t.Run(id.name+"/"+rt, func(t *testing.T) {
				files := escapeFiles(id, false, map[string]string{"data/.keep": ""})
				files["omni/config.toml"] += fmt.Sprintf("runtime = %q\n", rt)
				r := newEscapeRepo(t, id, files)
				out := r.exec(`import { writeFileSync, readFileSync } from "node:fs";
import { hello } from "notes";
writeFileSync("data/out.txt", hello());
console.log("read back", readFileSync("data/out.txt", "utf8"));`, 2*time.Minute)
				if out.ExitCode != 0 || !strings.Contains(out.Stdout, "read back hi") {
					t.Errorf("%s under the walls: %+v", rt, out)
				}
				if !contained(out.Isolation) {
					t.Errorf("isolation = %q", out.Isolation)
				}
			})
		}
	}
}

// TestAutoWithoutUserNamespaces runs omnidev where the kernel refuses user
// namespaces, as on Ubuntu 24.04 or in a container, without changing this
// machine: inside a user namespace of its own whose user.max_user_namespaces
// is 0. The default isolation then falls back to the Landlock mode, says
// why, and holds.
func TestAutoWithoutUserNamespaces(t *testing.T) {
	for _, id := range identities() {
		if !strings.HasSuffix(id.name, "/namespaces") {
			continue
		}
		t.Run(strings.TrimSuffix(id.name, "/namespaces"), func(t *testing.T) {
			id.mode = "auto"
			r := newEscapeRepo(t, id, escapeFiles(id, false, nil))
			writeFile(t, r.dir, "prog.ts", fmt.Sprintf(`import { readFileSync, writeFileSync } from "node:fs";
try { console.log(readFileSync(%q, "utf8")); } catch (e: any) { console.log("refused key", e.code); }
try { writeFileSync(%q, "x"); console.log("WROTE outside"); } catch (e: any) { console.log("refused write", e.code); }`,
				filepath.Join(r.home, ".ssh", "id_rsa"), filepath.Join(r.dir, "outside.txt")))
			r.own()
			cmd := r.command(nil)
			cmd.Path, _ = exec.LookPath("unshare")
			cmd.Args = []string{"unshare", "--user", "--map-root-user", "sh", "-c",
				`echo 0 > /proc/sys/user/max_user_namespaces && exec "$0" --dir "$1" exec --json "$2"`,
				binary, r.root, filepath.Join(r.dir, "prog.ts")}
			data, err := cmd.Output()
			if err != nil {
				t.Fatalf("%v\n%s", err, data)
			}
			var out execOut
			if err := json.Unmarshal(data, &out); err != nil {
				t.Fatalf("%v\n%s", err, data)
			}
			if !strings.HasPrefix(out.Isolation, "landlock+seccomp") || !strings.Contains(out.Isolation, ": no user namespaces (user.max_user_namespaces=0)") {
				t.Errorf("isolation = %q", out.Isolation)
			}
			if strings.Contains(out.Stdout, "PRIVATE-KEY") || strings.Contains(out.Stdout, "WROTE") {
				t.Errorf("the Landlock mode did not hold:\n%s", out.Stdout)
			}
		})
	}
}

// runBounded runs cmd and returns its stdout; past bound it is killed and
// the test fails: a hang is the failure these tests look for.
func runBounded(t *testing.T, cmd *exec.Cmd, bound time.Duration) ([]byte, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return append(stdout.Bytes(), stderr.Bytes()...), err
		}
		return stdout.Bytes(), nil
	case <-time.After(bound):
		cmd.Process.Kill()
		<-done
		t.Fatalf("still running after %v\n%s", bound, stderr.String())
		return nil, nil
	}
}
