package server_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/omnidev/omnidev/internal/capability/captest"
	"github.com/omnidev/omnidev/internal/testrepo"
)

// waitFor polls cond until it holds or the deadline passes.

type queryOut struct {
	Results []struct{ Source, Capability, Snippet string }
	Summary []struct{ ID, Module string }
}

func (s *server) query(t testing.TB, q string) queryOut {
	var out queryOut
	s.call(t, t.Context(), "omni_query", map[string]any{"query": q, "limit": 100}, &out)
	return out
}

func (o queryOut) has(source string) bool {
	for _, r := range o.Results {
		if r.Source == source {
			return true
		}
	}
	return false
}

// ids are the capabilities the summary lists, without the built-in
// omnidev module, which every summary ends with.
func (o queryOut) ids() string {
	var ids []string
	for _, c := range o.Summary {
		if c.ID != "omnidev" {
			ids = append(ids, c.ID)
		}
	}
	return strings.Join(ids, ",")
}

const reloadWait = 10 * time.Second

func TestReload(t *testing.T) {
	root := fixtureRepo(t)
	s := startServer(t, root)
	config := filepath.Join(root, "omni", "config.toml")
	original, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	summary := func() string { return s.query(t, "").ids() }

	t.Run("add a capability", func(t *testing.T) {
		writeFile(t, root, "omni/capabilities/notes/capability.toml", "[capability]\nid = \"notes\"\ndescription = \"Keep zanzibarian notes\"\n")
		writeFile(t, root, "omni/capabilities/notes/index.ts", "export const n = 1;\n")
		if err := os.WriteFile(config, []byte(strings.Replace(string(original), `enable = ["repo", "tasks"]`, `enable = ["repo", "tasks", "notes"]`, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		testrepo.WaitFor(t, "notes in the summary", reloadWait, func() bool { return summary() == "notes,repo,tasks" })
		if !s.query(t, "zanzibarian").has("capability:notes") {
			t.Error("the new capability is not searchable")
		}
	})

	t.Run("edit a doc three folders deep", func(t *testing.T) {
		writeFile(t, root, "omni/capabilities/notes/docs/a/b/c.md", "# Deep\n\nquokkas live here\n")
		testrepo.WaitFor(t, "the deep doc", reloadWait, func() bool { return s.query(t, "quokkas").has("doc:notes/a/b/c") })
		writeFile(t, root, "omni/capabilities/notes/docs/a/b/c.md", "# Deep\n\nwombats live here now\n")
		testrepo.WaitFor(t, "the edited doc", reloadWait, func() bool { return s.query(t, "wombats").has("doc:notes/a/b/c") })
		if s.query(t, "quokkas").has("doc:notes/a/b/c") {
			t.Error("the old content is still found")
		}
	})

	t.Run("mkdir -p and write at once", func(t *testing.T) {
		writeFile(t, root, "omni/capabilities/notes/docs/x/y/z/new.md", "# New\n\naardvarks\n")
		testrepo.WaitFor(t, "the new doc", reloadWait, func() bool { return s.query(t, "aardvarks").has("doc:notes/x/y/z/new") })
	})

	t.Run("broken TOML keeps the last good state, then is fixed", func(t *testing.T) {
		if err := os.WriteFile(config, []byte("enable = [\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		testrepo.WaitFor(t, "the failed reload in the server's log", reloadWait, func() bool {
			for _, line := range strings.Split(s.stderr.String(), "\n") {
				if strings.Contains(line, "reload failed") && strings.Contains(line, "config.toml") {
					return true
				}
			}
			return false
		})
		if got := summary(); got != "notes,repo,tasks" {
			t.Errorf("after a broken config: summary %s, want the last good state", got)
		}
		// Rename-on-save, as editors do.
		tmp := config + ".tmp"
		if err := os.WriteFile(tmp, original, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, config); err != nil {
			t.Fatal(err)
		}
		testrepo.WaitFor(t, "the fixed config", reloadWait, func() bool { return summary() == "repo,tasks" })
	})

	t.Run("a limit out of range keeps the last good state", func(t *testing.T) {
		writeFile(t, root, ".omni/config.local.toml", "[sandbox]\nmax_output_bytes = 99999999999\n")
		want := ".omni/config.local.toml:2:20: [sandbox] max_output_bytes is 99999999999, out of range; allowed: 1 to 16777216"
		testrepo.WaitFor(t, "the failed reload in the server's log", reloadWait, func() bool {
			return strings.Contains(s.stderr.String(), want)
		})
		if got := summary(); got != "repo,tasks" {
			t.Errorf("after an out-of-range limit: summary %s, want the last good state", got)
		}
		// The next run still has the last good cap (the default 5 KiB).
		var out struct {
			ExitCode  int `json:"exit_code"`
			Stdout    string
			Truncated struct{ Stdout bool }
		}
		s.call(t, t.Context(), "omni_execute", map[string]any{"code": `process.stdout.write("x".repeat(1 << 20));`}, &out)
		if out.ExitCode != 0 || !out.Truncated.Stdout || len(out.Stdout) > 8<<10 {
			t.Errorf("run after the rejected limit: exit %d, truncated %v, %d bytes of stdout", out.ExitCode, out.Truncated.Stdout, len(out.Stdout))
		}
		if err := os.Remove(filepath.Join(root, ".omni/config.local.toml")); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("switch the active profile", func(t *testing.T) {
		writeFile(t, root, ".omni/active-profile", "minimal\n")
		testrepo.WaitFor(t, "the minimal profile", reloadWait, func() bool { return summary() == "repo" })
		if s.query(t, "addTask").has("capability:tasks") {
			t.Error("a disabled capability is still found")
		}
		if err := os.Remove(filepath.Join(root, ".omni/active-profile")); err != nil {
			t.Fatal(err)
		}
		testrepo.WaitFor(t, "the default profile", reloadWait, func() bool { return summary() == "repo,tasks" })
	})

	t.Run("remove a capability folder", func(t *testing.T) {
		if err := os.RemoveAll(filepath.Join(root, "omni/capabilities/tasks")); err != nil {
			t.Fatal(err)
		}
		testrepo.WaitFor(t, "tasks gone", reloadWait, func() bool { return summary() == "repo" })
	})
}

// serveRaw starts `omnidev serve` with its stdin kept open and no client.
func serveRaw(t *testing.T, root string) (*exec.Cmd, *testrepo.Buffer, func()) {
	t.Helper()
	cmd := exec.Command(binary, "serve")
	cmd.Dir = root
	stderr := new(testrepo.Buffer)
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	testrepo.WaitFor(t, "the PID file", reloadWait, func() bool {
		data, _ := os.ReadFile(filepath.Join(root, ".omni", "server.pid"))
		return strings.TrimSpace(string(data)) == fmt.Sprint(cmd.Process.Pid)
	})
	return cmd, stderr, func() { stdin.Close() }
}

func TestSignalStopsServer(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			root := fixtureRepo(t)
			cmd, stderr, closeStdin := serveRaw(t, root)
			defer closeStdin()
			start := time.Now()
			cmd.Process.Signal(sig)
			if err := cmd.Wait(); err != nil {
				t.Errorf("exit after %v: %v\n%s", sig, err, stderr)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("took %v to stop, want under 2 s", d)
			}
			if _, err := os.Stat(filepath.Join(root, ".omni", "server.pid")); !os.IsNotExist(err) {
				t.Errorf("PID file left behind: %v", err)
			}
			if !strings.Contains(stderr.String(), `msg="server stopped" reason=signal`) {
				t.Errorf("no stop line with the reason:\n%s", stderr)
			}
		})
	}
}

// TestSIGTERMKillsRunningProgram checks that stopping the server kills a
// program it is running, and what that program started.
func TestSIGTERMKillsRunningProgram(t *testing.T) {
	root := fixtureRepo(t)
	s := startServer(t, root)
	child, _ := startHanging(t, context.Background(), s.session, root)
	start := time.Now()
	s.cmd.Process.Signal(syscall.SIGTERM)
	testrepo.WaitFor(t, "the server to exit", 5*time.Second, func() bool { return !testrepo.Alive(s.cmd.Process.Pid) })
	testrepo.WaitFor(t, "the program's child to die", 5*time.Second, func() bool { return !testrepo.Alive(child) })
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("stopping took %v", d)
	}
}

func TestStatusAndStop(t *testing.T) {
	root := fixtureRepo(t)
	omnidev := func(args ...string) (string, int) {
		cmd := exec.Command(binary, append([]string{"--dir", root}, args...)...)
		out, _ := cmd.CombinedOutput()
		return string(out), cmd.ProcessState.ExitCode()
	}
	if out, code := omnidev("status"); code != 1 || !strings.Contains(out, "not running") {
		t.Errorf("status with no server: exit %d, %q", code, out)
	}
	cmd, stderr, closeStdin := serveRaw(t, root)
	defer closeStdin()
	if out, code := omnidev("status"); code != 0 || !strings.Contains(out, fmt.Sprintf("pid %d", cmd.Process.Pid)) {
		t.Errorf("status with a server: exit %d, %q", code, out)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	if out, code := omnidev("stop"); code != 0 || !strings.Contains(out, "stopped") {
		t.Errorf("stop: exit %d, %q\n%s", code, out, stderr)
	}
	if err := <-waited; err != nil {
		t.Errorf("server exit: %v", err)
	}

	t.Run("stale PID file", func(t *testing.T) {
		dead := exec.Command("true")
		dead.Run()
		writeFile(t, root, ".omni/server.pid", fmt.Sprintf("%d\n", dead.Process.Pid))
		if out, code := omnidev("status"); code != 1 || !strings.Contains(out, "stale") {
			t.Errorf("status with a stale file: exit %d, %q", code, out)
		}
		if out, code := omnidev("stop"); code != 0 || !strings.Contains(out, "already gone") {
			t.Errorf("stop with a stale file: exit %d, %q", code, out)
		}
		cmd, stderr, closeStdin := serveRaw(t, root)
		closeStdin()
		cmd.Wait()
		if !strings.Contains(stderr.String(), "stale PID file") {
			t.Errorf("a new server did not note the stale file:\n%s", stderr)
		}
	})
}

// TestTwoServersOneRepository: a second server on a repository warns and
// builds a private index instead of waiting on the first one's; both are
// tracked: status lists both, the second's exit leaves the first named by
// the PID file, and stop reaches it.
func TestTwoServersOneRepository(t *testing.T) {
	root := fixtureRepo(t)
	first := startServer(t, root)
	second := startServer(t, root)
	if !strings.Contains(second.stderr.String(), "another omnidev server is serving this repository") ||
		!strings.Contains(second.stderr.String(), "private") {
		t.Errorf("the second server did not warn or did not use a private index:\n%s", second.stderr)
	}
	for _, s := range []*server{first, second} {
		if !s.query(t, "addTask").has("capability:tasks") {
			t.Error("a server cannot search")
		}
	}
	pidOf := func() string {
		data, _ := os.ReadFile(filepath.Join(root, ".omni", "server.pid"))
		return strings.TrimSpace(string(data))
	}
	cli := func(args ...string) string {
		out, _ := exec.Command(binary, append([]string{"--dir", root}, args...)...).CombinedOutput()
		return string(out)
	}
	if got := pidOf(); got != fmt.Sprint(second.cmd.Process.Pid) {
		t.Errorf("PID file names %s, want the newest server %d", got, second.cmd.Process.Pid)
	}
	status := cli("status")
	for _, s := range []*server{first, second} {
		if !strings.Contains(status, fmt.Sprintf("running: pid %d ", s.cmd.Process.Pid)) {
			t.Errorf("status does not list server %d:\n%s", s.cmd.Process.Pid, status)
		}
	}
	second.session.Close()
	second.cmd.Wait()
	if got := pidOf(); got != fmt.Sprint(first.cmd.Process.Pid) {
		t.Errorf("after the second server's exit the PID file names %q, want the first, still serving (%d)", got, first.cmd.Process.Pid)
	}
	if status := cli("status"); !strings.Contains(status, fmt.Sprintf("running: pid %d ", first.cmd.Process.Pid)) {
		t.Errorf("status after the second server's exit:\n%s", status)
	}
	if out := cli("stop"); !strings.Contains(out, fmt.Sprintf("stopped server %d", first.cmd.Process.Pid)) {
		t.Errorf("stop did not stop the first server:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(root, ".omni", "server.pid")); err == nil {
		t.Error("the PID file outlived the last server")
	}
}

// TestStatusDuringFirstIndexBuild checks that the PID file exists from the
// server's first moment: while the first index of a repository with many
// megabytes of docs is being built, status reports the server and stop ends
// it.
func TestStatusDuringFirstIndexBuild(t *testing.T) {
	root := t.TempDir()
	if _, err := captest.Generate(root, captest.Options{Capabilities: 3, DocsPerCap: 16, MinDocBytes: 200 << 10, MaxDocBytes: 300 << 10}); err != nil {
		t.Fatal(err)
	}
	git(t, root, "init", "-q", "-b", "main")
	logFile := filepath.Join(t.TempDir(), "serve.log")
	cmd := exec.Command(binary, "serve", "--log-file", logFile)
	cmd.Dir = root
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	defer cmd.Process.Kill()
	logged := func() string {
		data, _ := os.ReadFile(logFile)
		return string(data)
	}
	pidFile := filepath.Join(root, ".omni", "server.pid")
	for end := time.Now().Add(reloadWait); ; time.Sleep(time.Millisecond) {
		data, _ := os.ReadFile(pidFile)
		if strings.TrimSpace(string(data)) == fmt.Sprint(cmd.Process.Pid) {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("no PID file after %v:\n%s", reloadWait, logged())
		}
	}
	// The log is written synchronously: a line not there now was not
	// written before the PID file.
	if log := logged(); strings.Contains(log, "msg=loaded") {
		t.Fatalf("the PID file appeared only after the first load:\n%s", log)
	}
	omnidev := func(args ...string) (string, int) {
		c := exec.Command(binary, append([]string{"--dir", root}, args...)...)
		out, _ := c.CombinedOutput()
		return string(out), c.ProcessState.ExitCode()
	}
	out, code := omnidev("status")
	building := !strings.Contains(logged(), "msg=loaded")
	t.Logf("status while the index was still being built: %v", building)
	if code != 0 || !strings.Contains(out, fmt.Sprintf("running: pid %d", cmd.Process.Pid)) {
		t.Errorf("status during the first index build: exit %d, %q", code, out)
	}
	if out, code := omnidev("stop"); code != 0 || !strings.Contains(out, "stopped") {
		t.Errorf("stop during the first index build: exit %d, %q\n%s", code, out, logged())
	}
	if err := <-waited; err != nil {
		t.Errorf("server exit: %v\n%s", err, logged())
	}
	if _, err := os.Stat(pidFile); !os.IsNotExist(err) {
		t.Errorf("PID file left behind: %v", err)
	}
	if log := logged(); !strings.Contains(log, `msg="server stopped" reason=signal`) {
		t.Errorf("no stop line with the reason:\n%s", log)
	}
}
