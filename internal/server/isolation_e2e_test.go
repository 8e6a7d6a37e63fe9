//go:build linux

package server_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/omnidev/omnidev/internal/isolate"
	"github.com/omnidev/omnidev/internal/testrepo"
)

// execOut is the part of omni_execute's result these tests read.
type execOut struct {
	ExitCode    int    `json:"exit_code"`
	Stdout      string `json:"stdout"`
	Stderr      string `json:"stderr"`
	TimedOut    bool   `json:"timed_out"`
	Isolation   string `json:"isolation"`
	OutOfMemory bool   `json:"out_of_memory"`
	// raw is the whole JSON result, for the fields a test reads itself.
	raw string
}

// lockedDownRepo is the fixture with a tight [sandbox]: network off, 4 s,
// 256 MiB, 64 processes.
func lockedDownRepo(t *testing.T, mode string) string {
	root := fixtureRepo(t)
	path := filepath.Join(root, "omni", "config.toml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg := strings.NewReplacer(`timeout = "30s"`, `timeout = "4s"`, "network = true", "network = false",
		`# memory = "2GiB"`, `memory = "256MiB"`, "processes = 256", "processes = 64").Replace(string(data))
	if !strings.Contains(cfg, `memory = "256MiB"`) || !strings.Contains(cfg, "processes = 64") {
		t.Fatalf("the fixture's [sandbox] no longer spells out memory and processes:\n%s", cfg)
	}
	cfg = strings.Replace(cfg, "[sandbox]\n", fmt.Sprintf("[sandbox]\nisolation = %q\n", mode), 1)
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, root, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qam", "lock down")
	return root
}

func (s *server) exec(t *testing.T, ctx context.Context, code string) execOut {
	t.Helper()
	var out execOut
	res := s.call(t, ctx, "omni_execute", map[string]any{"code": code}, &out)
	if res.IsError {
		t.Fatalf("omni_execute: tool error %s", res.Content[0].(*mcp.TextContent).Text)
	}
	return out
}

// fileDigest is a file's content, or "absent".
func fileDigest(t *testing.T, path string) string {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return "absent"
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestEndToEndIsolation tries, with the real binary and Bun, each way out
// a program was seen to take, and checks that it fails and leaves nothing.
func TestEndToEndIsolation(t *testing.T) {
	for _, mode := range []string{"namespaces", "landlock"} {
		t.Run(mode, func(t *testing.T) { testIsolation(t, mode) })
	}
}

func testIsolation(t *testing.T, mode string) {
	requireOwnCgroups := os.Getuid() == 0 // this machine delegates cgroup v1 to root only
	root := lockedDownRepo(t, mode)
	home := t.TempDir()
	s := startServer(t, root, "OMNIDEV_E2E_SECRET=s3cr3t-value", "HOME="+home)
	ctx := t.Context()
	marker := fmt.Sprintf("omnidev-escape-%d", time.Now().UnixNano())

	t.Run("writes outside the worktree do not land", func(t *testing.T) {
		out := s.exec(t, ctx, fmt.Sprintf(`import { writeFileSync } from "node:fs";
for (const p of ["/tmp/%[1]s", process.env.HOME + "/%[1]s", "../%[1]s", "/var/tmp/%[1]s"]) {
  try { writeFileSync(p, "x"); console.log("wrote", p); } catch (e: any) { console.log("refused", p, e.code); }
}`, marker))
		for _, p := range []string{"/tmp/" + marker, filepath.Join(home, marker), filepath.Join(filepath.Dir(root), marker), "/var/tmp/" + marker} {
			if _, err := os.Stat(p); err == nil {
				os.Remove(p)
				t.Errorf("%s exists after the run\n%s", p, out.Stdout)
			}
		}
		if !strings.HasPrefix(out.Isolation, strings.Replace(mode, "landlock", "landlock+seccomp", 1)) {
			t.Errorf("isolation = %q, want %s", out.Isolation, mode)
		}
	})

	t.Run("/etc/shadow cannot be read", func(t *testing.T) {
		out := s.exec(t, ctx, `import { readFileSync } from "node:fs";
try { process.stdout.write(readFileSync("/etc/shadow", "utf8")); } catch (e: any) { console.log("refused", e.code); }`)
		if strings.Contains(out.Stdout, "root:") {
			t.Errorf("the program read /etc/shadow:\n%.100s", out.Stdout)
		}
	})

	t.Run("the server's environment is out of reach", func(t *testing.T) {
		out := s.exec(t, ctx, fmt.Sprintf(`import { readFileSync, readdirSync } from "node:fs";
const seen: string[] = [];
for (const pid of [String(process.ppid), "%d", ...readdirSync("/proc").filter(p => /^\d+$/.test(p))]) {
  try { seen.push(readFileSync("/proc/" + pid + "/environ", "utf8")); } catch {}
}
console.log(seen.join("\n"), readdirSync("/proc").filter(p => /^\d+$/.test(p)).length, "processes");`, s.cmd.Process.Pid))
		if strings.Contains(out.Stdout, "s3cr3t-value") {
			t.Errorf("the program read the server's environment")
		}
	})

	t.Run("git, settings and runner are read-only", func(t *testing.T) {
		protected := []string{".git/config", ".git/hooks/pre-commit", ".omni/config.local.toml", "omni/config.toml", ".omni/sandbox/runner.ts", ".omni/.env"}
		before := map[string]string{}
		for _, rel := range protected {
			before[rel] = fileDigest(t, filepath.Join(root, rel))
		}
		out := s.exec(t, ctx, `import { writeFileSync, mkdirSync, renameSync } from "node:fs";
const attempts: [string, () => void][] = [
  [".git/hooks/pre-commit", () => writeFileSync(".git/hooks/pre-commit", "#!/bin/sh\ntouch /tmp/pwned\n", { mode: 0o755 })],
  [".git/config", () => writeFileSync(".git/config", "[alias]\n\tci = !touch /tmp/pwned\n", { flag: "a" })],
  [".omni/config.local.toml", () => writeFileSync(".omni/config.local.toml", "[sandbox]\nnetwork = true\ntimeout = \"24h\"\n")],
  ["omni/config.toml", () => writeFileSync("omni/config.toml", "[sandbox]\nnetwork = true\n", { flag: "a" })],
  ["move omni aside", () => { renameSync("omni", "omni.old"); mkdirSync("omni"); writeFileSync("omni/config.toml", "[sandbox]\nnetwork = true\n"); }],
  ["move .omni aside", () => renameSync(".omni", ".omni.old")],
  [".omni/sandbox/runner.ts", () => writeFileSync(".omni/sandbox/runner.ts", "console.log('hijacked')\n")],
  [".omni/state", () => writeFileSync(".omni/state/ok.txt", "state is writable\n")],
];
for (const [name, f] of attempts) { try { f(); console.log("done", name); } catch (e: any) { console.log("refused", name, e.code); } }`)
		for _, rel := range protected {
			if after := fileDigest(t, filepath.Join(root, rel)); after != before[rel] {
				t.Errorf("%s changed:\n%s\noutput:\n%s", rel, after, out.Stdout)
			}
		}
		if !strings.Contains(out.Stdout, "done .omni/state") {
			t.Errorf(".omni/state is not writable:\n%s", out.Stdout)
		}
		// The next run still has the committed limits.
		next := s.exec(t, ctx, `await new Promise(r => setTimeout(r, 8000)); console.log("outlived the timeout");`)
		if !next.TimedOut {
			t.Errorf("the next run was not stopped by the committed 4 s timeout: %+v", next)
		}
	})

	t.Run("setsid and detached children die with the run", func(t *testing.T) {
		late := filepath.Join(root, "late.txt")
		stamp := fmt.Sprintf("%09d", time.Now().UnixNano()%1e9)
		out := s.exec(t, ctx, fmt.Sprintf(`import { spawn, execSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
execSync("setsid sleep 600.%[1]s >/dev/null 2>&1 < /dev/null &");
spawn("sh", ["-c", "sleep 1; echo late > %[2]s"], { detached: true, stdio: "ignore" }).unref();
spawn("sh", ["-c", "(sleep 601.%[1]s &) ; exit 0"], { stdio: "ignore" });
await new Promise(r => setTimeout(r, 300));
const sleeps = readdirSync("/proc").filter(p => /^\d+$/.test(p)).filter(p => {
  try { return readFileSync("/proc/" + p + "/cmdline", "utf8").startsWith("sleep\0" + "60"); } catch { return false; }
});
console.log("leaving", sleeps.length, "sleeps running");`, stamp, late))
		if !strings.Contains(out.Stdout, "leaving 2 sleeps running") {
			t.Fatalf("the program did not start its two sleeps: %+v", out)
		}
		for _, d := range []string{"600", "601"} {
			if pids := processesRunning("sleep", d+"."+stamp); len(pids) > 0 {
				// The run has returned: no grace period is owed.
				t.Errorf("sleep %s survived the run: pids %v", d, pids)
			}
		}
		time.Sleep(1500 * time.Millisecond)
		if _, err := os.Stat(late); err == nil {
			t.Errorf("a detached child wrote %s after the run", late)
		}
	})

	t.Run("the memory limit stops a greedy program, not the server", func(t *testing.T) {
		out := s.exec(t, ctx, `const held: Buffer[] = [];
for (let i = 0; i < 40; i++) held.push(Buffer.alloc(32 << 20, 1));
console.log("allocated", held.length * 32, "MiB");`)
		if requireOwnCgroups && (!out.OutOfMemory || out.ExitCode == 0 || !strings.Contains(out.Stderr, "[sandbox] memory") || !strings.Contains(out.Stderr, "256MiB")) {
			t.Errorf("want out_of_memory, a non-zero exit and a stderr line naming the limit; got %+v", out)
		}
		if !requireOwnCgroups && !strings.Contains(out.Isolation, "memory limit") {
			t.Errorf("isolation = %q; want it to say the memory limit is not enforced", out.Isolation)
		}
		if again := s.exec(t, ctx, `console.log("alive")`); again.Stdout != "alive\n" {
			t.Errorf("the next run: %+v", again)
		}
	})

	t.Run("the processes limit stops a fork bomb, not the server", func(t *testing.T) {
		out := s.exec(t, ctx, `import { spawn } from "node:child_process";
let failed = 0;
for (let i = 0; i < 200; i++) { try { spawn("sleep", ["5"]).on("error", () => failed++); } catch { failed++; } }
await new Promise(r => setTimeout(r, 500));
console.log("failed", failed);`)
		if requireOwnCgroups && !strings.Contains(out.Stderr, "[sandbox] processes") {
			t.Errorf("want a stderr line naming the processes limit; got %+v", out)
		}
		if again := s.exec(t, ctx, `console.log("alive")`); again.Stdout != "alive\n" {
			t.Errorf("the next run: %+v", again)
		}
	})

	t.Run("network off blocks 127.0.0.1", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		accepted := make(chan struct{}, 1)
		go func() {
			if c, err := ln.Accept(); err == nil {
				accepted <- struct{}{}
				c.Close()
			}
		}()
		out := s.exec(t, ctx, fmt.Sprintf(`import { connect } from "node:net";
await new Promise<void>(done => {
  const c = connect({ host: "127.0.0.1", port: %d });
  c.on("connect", () => { console.log("connected"); c.destroy(); done(); });
  c.on("error", (e: any) => { console.log("error", e.code); done(); });
});`, ln.Addr().(*net.TCPAddr).Port))
		select {
		case <-accepted:
			t.Errorf("the program reached 127.0.0.1: %+v", out)
		case <-time.After(200 * time.Millisecond):
		}
		if strings.Contains(out.Stdout, "connected") {
			t.Errorf("the program connected: %+v", out)
		}
	})
}

// TestKillServerKillsRun checks that a kill -9 of the server takes
// everything its run started with it, setsid children included.
func TestKillServerKillsRun(t *testing.T) {
	for _, mode := range []string{"namespaces", "landlock"} {
		t.Run(mode, func(t *testing.T) { testKillServerKillsRun(t, mode) })
	}
}

func testKillServerKillsRun(t *testing.T, mode string) {
	root := fixtureRepo(t)
	cfg := filepath.Join(root, "omni", "config.toml")
	data, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(cfg, []byte(strings.Replace(string(data), "[sandbox]\n", fmt.Sprintf("[sandbox]\nisolation = %q\n", mode), 1)), 0o644)
	s := startServer(t, root)
	started := filepath.Join(root, ".omni", "state", "started") // writable in every mode
	marker := fmt.Sprintf("602.%09d", time.Now().UnixNano()%1e9)
	code := fmt.Sprintf(`import { execSync, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
execSync("setsid sleep %[1]s >/dev/null 2>&1 < /dev/null &");
spawn("sleep", ["%[1]s"], { detached: true, stdio: "ignore" }).unref();
writeFileSync(%[2]q, "");
await new Promise(() => {});`, marker, started)
	go s.session.CallTool(context.Background(), &mcp.CallToolParams{Name: "omni_execute", Arguments: map[string]any{"code": code}})
	testrepo.WaitFor(t, "the program's children", 20*time.Second, func() bool {
		_, err := os.Stat(started)
		return err == nil && len(processesRunning("sleep", marker)) == 2
	})
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testrepo.WaitFor(t, "the program's children to die with the server", 5*time.Second, func() bool {
		return len(processesRunning("sleep", marker)) == 0
	})
}

// TestIsolationAsOrdinaryUser runs a program with `omnidev exec` as an
// ordinary user (nobody, when the tests run as root): no setuid helper, no
// root needed.
func TestIsolationAsOrdinaryUser(t *testing.T) {
	dir, err := os.MkdirTemp("", "omnidev-nobody-*")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	root := filepath.Join(dir, "repo")
	writeFile(t, root, "omni/config.toml", "[sandbox]\nnetwork = false\n")
	marker := fmt.Sprintf("omnidev-nobody-%d", time.Now().UnixNano())
	writeFile(t, root, "prog.ts", fmt.Sprintf(`import { writeFileSync } from "node:fs";
writeFileSync("/tmp/%[1]s", "x");
writeFileSync("inside.txt", "x");
writeFileSync("../%[1]s", "x"); // the parent is the home folder: a private one`, marker))
	cmd := exec.CommandContext(t.Context(), binary, "--dir", root, "exec", "--json", filepath.Join(root, "prog.ts"))
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
	if os.Getuid() == 0 {
		for _, p := range []string{dir, root} {
			os.Chmod(p, 0o755)
		}
		filepath.Walk(dir, func(p string, _ os.FileInfo, _ error) error { return os.Lchown(p, 65534, 65534) })
		os.Chmod(filepath.Dir(binary), 0o755)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("omnidev exec: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), `"isolation": "namespaces`) {
		t.Errorf("output:\n%s", stdout.String())
	}
	if _, err := os.Stat(filepath.Join(root, "inside.txt")); err != nil {
		t.Errorf("the worktree write did not land: %v", err)
	}
	for _, p := range []string{"/tmp/" + marker, filepath.Join(dir, marker)} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s exists after the run", p)
		}
	}
}

// TestIsolationWithHelperOfAnotherBuild runs a program with `omnidev exec`
// installed beside an omnidev-sandbox of another build, which would
// misread the specs it is sent: omnidev serves as the init itself, the run
// is still isolated, and doctor says why and what to do.
func TestIsolationWithHelperOfAnotherBuild(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "omnidev")
	data, err := os.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "omnidev", string(data))
	writeFile(t, dir, isolate.HelperName, "#!/bin/sh\necho 1\n")
	for _, p := range []string{bin, filepath.Join(dir, isolate.HelperName)} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	root := filepath.Join(dir, "repo")
	writeFile(t, root, "omni/config.toml", "")
	writeFile(t, root, "prog.ts", `console.log("pid", process.pid)`)
	out, err := exec.CommandContext(t.Context(), bin, "--dir", root, "exec", "--json", filepath.Join(root, "prog.ts")).CombinedOutput()
	if err != nil {
		t.Fatalf("omnidev exec: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), `"isolation": "namespaces+landlock+seccomp"`) || !strings.Contains(string(out), `"stdout": "pid `) {
		t.Errorf("the run was not isolated:\n%s", out)
	}
	out, _ = exec.CommandContext(t.Context(), bin, "--dir", root, "doctor").CombinedOutput()
	if !strings.Contains(string(out), "init             omnidev itself: "+filepath.Join(dir, isolate.HelperName)+" is from another build") {
		t.Errorf("doctor does not say why the helper is not used:\n%s", out)
	}
}
