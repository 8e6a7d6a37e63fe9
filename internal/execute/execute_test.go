package execute

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omnidev/omnidev/internal/capability"
	"github.com/omnidev/omnidev/internal/isolate"
	"github.com/omnidev/omnidev/internal/runfolder"
	"github.com/omnidev/omnidev/internal/testrepo"
)

func TestRunPrograms(t *testing.T) {
	requireBun(t)
	tests := []struct {
		name       string
		code       string
		exit       int
		stdout     string // substring
		stderr     []string
		noStderrOf string
	}{
		{
			name: "main's return value is the exit code",
			code: "export function main(): number { console.log(\"hi\"); return 3; }\n",
			exit: 3, stdout: "hi\n",
		},
		{
			name: "async main returning nothing exits 0",
			code: "export async function main() { await Promise.resolve(); console.log(\"done\"); }\n",
			exit: 0, stdout: "done\n",
		},
		{
			name: "a non-number return exits 0",
			code: "export function main() { return \"three\"; }\n",
			exit: 0,
		},
		{
			name: "no main runs the top level",
			code: "console.log(\"top\", 1 + 1);\n",
			exit: 0, stdout: "top 2\n",
		},
		{
			name: "thrown error prints its stack and exits 1",
			code: "function inner(): never { throw new Error(\"boom\"); }\nexport function main() { inner(); }\n",
			exit: 1, stderr: []string{"Error: boom", "at inner", "main.ts:1"},
		},
		{
			name: "rejected promise prints its stack and exits 1",
			code: "export async function main() { await new Promise((_, reject) => setTimeout(() => reject(new Error(\"nope\")), 1)); }\n",
			exit: 1, stderr: []string{"Error: nope", "main.ts"},
		},
		{
			name: "error at the top level exits 1",
			code: "throw new TypeError(\"top-level\");\n",
			exit: 1, stderr: []string{"TypeError: top-level"},
		},
		{
			name: "type errors do not stop a run",
			code: "const n: number = \"not a number\";\nexport function main(): number { console.log(n); return 0; }\n",
			exit: 0, stdout: "not a number\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			sb := prepare(t, root)
			res, err := New(root, nil).Run(t.Context(), request(sb, tt.code))
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != tt.exit {
				t.Errorf("exit code = %d, want %d (stderr: %s)", res.ExitCode, tt.exit, res.Stderr)
			}
			if !strings.Contains(res.Stdout, tt.stdout) {
				t.Errorf("stdout = %q, want it to contain %q", res.Stdout, tt.stdout)
			}
			for _, s := range tt.stderr {
				if !strings.Contains(res.Stderr, s) {
					t.Errorf("stderr = %q, want it to contain %q", res.Stderr, s)
				}
			}
			if res.TimedOut || res.Cancelled {
				t.Errorf("timed_out=%v cancelled=%v, want neither", res.TimedOut, res.Cancelled)
			}
		})
	}
}

func TestRunImportsCapability(t *testing.T) {
	requireBun(t)
	root := t.TempDir()
	dir := filepath.Join(root, "omni", "capabilities", "tasks")
	testrepo.WriteFiles(t, dir, map[string]string{
		"index.ts": "export function add(a: number, b: number): number { return a + b; }\n",
	})
	sb := prepare(t, root, &capability.Capability{ID: "tasks", Module: "tasks", Dir: dir, Entry: "index.ts"})
	code := "import { add } from \"tasks\";\nexport function main() { console.log(add(2, 3)); return add(1, 1); }\n"
	res, err := New(root, nil).Run(t.Context(), request(sb, code))
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 2 || res.Stdout != "5\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 2 and \"5\\n\"", res.ExitCode, res.Stdout, res.Stderr)
	}
}

func TestRunTimeout(t *testing.T) {
	requireBun(t)
	root := t.TempDir()
	req := request(prepare(t, root), "console.log(\"spinning\");\nwhile (true) {}\n")
	req.Timeout = 300 * time.Millisecond
	start := time.Now()
	res, err := New(root, nil).Run(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	if !res.TimedOut || res.Cancelled || res.ExitCode != -1 {
		t.Errorf("timed_out=%v cancelled=%v exit=%d, want true, false, -1", res.TimedOut, res.Cancelled, res.ExitCode)
	}
	// Bun dies on SIGTERM; the bound leaves room for a slow machine, and
	// would still catch a missing kill (the loop never ends).
	if elapsed > req.Timeout+killGrace+5*time.Second {
		t.Errorf("run took %v after a %v timeout", elapsed, req.Timeout)
	}
	if !strings.Contains(res.Stdout, "spinning") {
		t.Errorf("stdout = %q, want the output printed before the timeout", res.Stdout)
	}
}

// spawnSleep is a program that starts `sleep 30` in the background with the
// given stdio option, prints its pid and returns without waiting for it.
func spawnSleep(stdio string, detached bool, wait string) string {
	return fmt.Sprintf(`import { spawn } from "node:child_process";
const child = spawn("sleep", ["30"], { stdio: %q, detached: %v });
child.unref();
console.log(child.pid);
%s
`, stdio, detached, wait)
}

// pidOf reads the pid the program printed on its first line.
func pidOf(t *testing.T, stdout string) int {
	t.Helper()
	line, _, _ := strings.Cut(stdout, "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || pid <= 0 {
		t.Fatalf("program did not print a pid: stdout %q", stdout)
	}
	return pid
}

// requireGone fails unless pid is gone. A killed process whose parent died
// may linger as a zombie until init reaps it (slowly in some containers):
// a zombie runs nothing, so it counts as gone.
func requireGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		if !testrepo.Alive(pid) {
			return
		}
		if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
			if _, rest, ok := strings.Cut(string(stat), ") "); ok && strings.HasPrefix(rest, "Z") {
				return
			}
		}
		if time.Now().After(deadline) {
			testrepo.Kill(pid)
			t.Fatalf("process %d still runs after the run ended", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestRunKillsLeftovers(t *testing.T) {
	requireBun(t)
	tests := []struct {
		name  string
		stdio string
	}{
		{"background child", "ignore"},
		// The child holds the stdout pipe: Run must not wait for it to exit.
		{"background child holding the output pipe", "inherit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			start := time.Now()
			res, err := New(root, nil).Run(t.Context(), request(prepare(t, root), spawnSleep(tt.stdio, false, "")))
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != 0 {
				t.Fatalf("exit %d, stderr %q", res.ExitCode, res.Stderr)
			}
			requireGone(t, pidOf(t, res.Stdout))
			if elapsed := time.Since(start); elapsed > 10*time.Second {
				t.Errorf("Run took %v: it waited for the background child", elapsed)
			}
		})
	}
}

// TestRunEscapedChildDoesNotHang covers a child that leaves the process
// group (setsid) and keeps the output pipe: the group kill cannot reach it,
// and Run must still return, after pipeDrainTimeout.
func TestRunEscapedChildDoesNotHang(t *testing.T) {
	requireBun(t)
	root := t.TempDir()
	res, err := New(root, nil).Run(t.Context(), request(prepare(t, root), spawnSleep("inherit", true, "")))
	if err != nil {
		t.Fatal(err)
	}
	pid := pidOf(t, res.Stdout)
	testrepo.Kill(pid)
	if res.ExitCode != 0 {
		t.Fatalf("exit %d, stderr %q", res.ExitCode, res.Stderr)
	}
	if res.DurationMS > 10_000 {
		t.Errorf("duration %d ms", res.DurationMS)
	}
}

func TestRunCancel(t *testing.T) {
	requireBun(t)
	root := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req := request(prepare(t, root), spawnSleep("ignore", false, "await new Promise((resolve) => setTimeout(resolve, 30_000));"))
	// Cancel once the program has printed its child's pid.
	req.Progress = func(p Progress) {
		if p.StdoutBytes > 0 {
			cancel()
		}
	}
	start := time.Now()
	res, err := New(root, nil).Run(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Cancelled || res.TimedOut || res.ExitCode != -1 {
		t.Errorf("cancelled=%v timed_out=%v exit=%d, want true, false, -1", res.Cancelled, res.TimedOut, res.ExitCode)
	}
	if elapsed := time.Since(start); elapsed > 10*time.Second {
		t.Errorf("a cancelled run took %v", elapsed)
	}
	requireGone(t, pidOf(t, res.Stdout))
}

func TestRunCapsOutput(t *testing.T) {
	requireBun(t)
	root := t.TempDir()
	const lines = 8 << 20 / 16 // 8 MiB of 16-byte lines
	// One stream API throughout: Bun writes console.log to a pipe at once
	// but queues process.stdout.write, so mixing them reorders output.
	code := fmt.Sprintf(`process.stdout.write("HEAD-MARK\n");
const line = "0123456789abcde\n";
const chunk = line.repeat(4096);
for (let i = 0; i < %d / 4096; i++) process.stdout.write(chunk);
process.stdout.write("TAIL-MARK\n");
console.error("small stderr");
`, lines)
	req := request(prepare(t, root), code)
	req.MaxOutputBytes = 64 << 10
	res, err := New(root, nil).Run(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 {
		t.Fatalf("exit %d: %s", res.ExitCode, res.Stderr)
	}
	if !res.Truncated.Stdout || res.Truncated.Stderr {
		t.Errorf("truncated = %+v, want stdout only", res.Truncated)
	}
	if !strings.HasPrefix(res.Stdout, "HEAD-MARK\n") || !strings.HasSuffix(res.Stdout, "TAIL-MARK\n") {
		t.Errorf("stdout does not keep head and tail: starts %q, ends %q", res.Stdout[:min(20, len(res.Stdout))], res.Stdout[max(0, len(res.Stdout)-20):])
	}
	if n := strings.Count(res.Stdout, "[... omnidev:"); n != 1 {
		t.Errorf("%d omission markers, want 1", n)
	}
	// Every byte is accounted for: nothing was lost to the pipe at exit.
	total := len("HEAD-MARK\n") + lines*16 + len("TAIL-MARK\n")
	kept := len(res.Stdout) - len(fmt.Sprintf("\n[... omnidev: %d bytes omitted ...]\n", total-req.MaxOutputBytes))
	if want := fmt.Sprintf("[... omnidev: %d bytes omitted ...]", total-kept); !strings.Contains(res.Stdout, want) || kept != req.MaxOutputBytes {
		t.Errorf("kept %d bytes, want %d, with marker %q", kept, req.MaxOutputBytes, want)
	}
	if res.Stderr != "small stderr\n" {
		t.Errorf("stderr = %q", res.Stderr)
	}
}

// TestRunLargeCapSmallOutput runs a program that prints one line under the
// largest output cap the config allows: the run must not allocate its two
// streams' buffers at the cap (32 MiB), only what the program printed.
func TestRunLargeCapSmallOutput(t *testing.T) {
	requireBun(t)
	root := t.TempDir()
	req := request(prepare(t, root), `console.log("hi"); console.error("ho");`)
	req.MaxOutputBytes = capability.MaxMaxOutputBytes
	e := New(root, nil)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res, err := e.Run(t.Context(), req)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stdout != "hi\n" || res.Stderr != "ho\n" {
		t.Fatalf("stdout %q, stderr %q", res.Stdout, res.Stderr)
	}
	if allocated := after.TotalAlloc - before.TotalAlloc; allocated > capability.MaxMaxOutputBytes {
		t.Errorf("a run printing 6 bytes under a %d-byte cap allocated %d bytes", req.MaxOutputBytes, allocated)
	}
}

func TestRunSerializes(t *testing.T) {
	requireBun(t)
	root := t.TempDir()
	sb := prepare(t, root)
	e := New(root, nil)
	const runs = 3
	type span struct{ start, end int64 }
	results := make([]*Result, runs)
	var wg sync.WaitGroup
	for i := range runs {
		wg.Go(func() {
			code := fmt.Sprintf(`const start = Date.now();
await new Promise((resolve) => setTimeout(resolve, 150));
console.log(JSON.stringify({ run: %d, start, end: Date.now() }));
`, i)
			res, err := e.Run(t.Context(), request(sb, code))
			if err != nil {
				t.Error(err)
				return
			}
			results[i] = res
		})
	}
	wg.Wait()
	var spans []span
	for i, res := range results {
		if res == nil {
			t.FailNow()
		}
		var out struct {
			Run        int
			Start, End int64
		}
		if err := json.Unmarshal([]byte(res.Stdout), &out); err != nil || out.Run != i {
			t.Fatalf("run %d got stdout %q (stderr %q): not its own", i, res.Stdout, res.Stderr)
		}
		spans = append(spans, span{out.Start, out.End})
	}
	slices.SortFunc(spans, func(a, b span) int { return int(a.start - b.start) })
	for i := 1; i < len(spans); i++ {
		if spans[i].start < spans[i-1].end {
			t.Errorf("runs overlapped: %v", spans)
		}
	}
}

func TestRunQueuedCancel(t *testing.T) {
	requireBun(t)
	root := t.TempDir()
	sb := prepare(t, root)
	e := New(root, nil)
	started := make(chan struct{})
	first := make(chan error, 1)
	go func() {
		req := request(sb, "await new Promise((resolve) => setTimeout(resolve, 1500));\n")
		req.Progress = func(Progress) {
			select {
			case <-started:
			default:
				close(started)
			}
		}
		_, err := e.Run(t.Context(), req)
		first <- err
	}()
	select {
	case <-started:
	case err := <-first:
		t.Fatalf("the first run ended before it reported progress: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := e.Run(ctx, request(sb, "console.log(1)\n"))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("queued run error = %v, want the context's", err)
	}
	if elapsed := time.Since(start); elapsed > time.Second {
		t.Errorf("queued run gave up after %v, want ~100ms", elapsed)
	}
	if err := <-first; err != nil {
		t.Error(err)
	}
}

func TestRunEnvironment(t *testing.T) {
	requireBun(t)
	t.Setenv("OMNIDEV_TEST_SECRET", "hunter2")
	root := t.TempDir()
	req := request(prepare(t, root), "console.log(JSON.stringify(process.env));\n")
	req.Env = []string{"GREETING=hello", "PATH=/usr/bin:/bin"}
	res, err := New(root, nil).Run(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	var env map[string]string
	if err := json.Unmarshal([]byte(res.Stdout), &env); err != nil {
		t.Fatalf("stdout %q: %v (stderr %q)", res.Stdout, err, res.Stderr)
	}
	want := map[string]string{"GREETING": "hello", "PATH": "/usr/bin:/bin"}
	if len(env) != len(want) || env["GREETING"] != "hello" || env["PATH"] != want["PATH"] {
		t.Errorf("program saw environment %v, want exactly %v", env, want)
	}
	if strings.Contains(res.Stdout, "hunter2") {
		t.Error("the server's environment leaked into the program")
	}
}

func TestRunEmptyEnvironment(t *testing.T) {
	requireBun(t)
	root := t.TempDir()
	req := request(prepare(t, root), "console.log(Object.keys(process.env).length);\n")
	req.Env = nil // nil must not mean "inherit", as it does for exec.Cmd
	res, err := New(root, nil).Run(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stdout != "0\n" {
		t.Errorf("program saw %s variables, want 0 (stderr %q)", res.Stdout, res.Stderr)
	}
}

func TestRunNetwork(t *testing.T) {
	requireBun(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "pong")
	}))
	defer srv.Close()
	code := fmt.Sprintf(`try {
  const res = await fetch(%q);
  console.log("reached", await res.text());
} catch (err) {
  console.log("failed", String(err));
}
`, srv.URL)
	for _, network := range []bool{true, false} {
		t.Run(fmt.Sprintf("network=%v", network), func(t *testing.T) {
			root := t.TempDir()
			req := request(prepare(t, root), code)
			req.Network = network
			res, err := New(root, nil).Run(t.Context(), req)
			if errors.Is(err, ErrNetworkIsolation) {
				// CI must allow them (on GitHub's Ubuntu 24.04 runners:
				// sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0).
				t.Fatalf("this kernel refuses user namespaces; enable them to run this test: %v", err)
			}
			if err != nil {
				t.Fatal(err)
			}
			want := "reached pong"
			if !network {
				want = "failed"
			}
			if !strings.HasPrefix(res.Stdout, want) {
				t.Errorf("stdout = %q (stderr %q), want it to start with %q", res.Stdout, res.Stderr, want)
			}
		})
	}
}

func TestRunProgress(t *testing.T) {
	requireBun(t)
	root := t.TempDir()
	var mu sync.Mutex
	var reports []Progress
	req := request(prepare(t, root), `for (let i = 0; i < 6; i++) {
  console.log("tick", i);
  await new Promise((resolve) => setTimeout(resolve, 250));
}
`)
	req.Progress = func(p Progress) {
		mu.Lock()
		reports = append(reports, p)
		mu.Unlock()
	}
	if _, err := New(root, nil).Run(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	n := len(reports)
	got := slices.Clone(reports)
	mu.Unlock()
	if n < 2 {
		t.Fatalf("%d progress reports for a 1.5 s run, want one at least every second", n)
	}
	for i := 1; i < len(got); i++ {
		if got[i].Elapsed <= got[i-1].Elapsed || got[i].StdoutBytes < got[i-1].StdoutBytes {
			t.Errorf("progress went backwards: %+v then %+v", got[i-1], got[i])
		}
	}
	if got[len(got)-1].StdoutBytes == 0 {
		t.Errorf("progress never counted stdout: %+v", got)
	}
	time.Sleep(2 * progressInterval)
	mu.Lock()
	defer mu.Unlock()
	if len(reports) != n {
		t.Errorf("progress reported after the run ended")
	}
}

func TestRunErrors(t *testing.T) {
	root := t.TempDir()
	sb := prepare(t, root)
	tests := []struct {
		name   string
		change func(*Request)
		want   error
		msg    string
	}{
		{"empty code", func(r *Request) { r.Code = "" }, ErrEmptyCode, "code"},
		{"blank code", func(r *Request) { r.Code = " \n\t" }, ErrEmptyCode, "code"},
		{"code too large", func(r *Request) { r.Code = strings.Repeat("x", MaxCodeBytes+1) }, ErrCodeTooLarge, "limit"},
		{"zero timeout", func(r *Request) { r.Timeout = 0 }, ErrInvalidTimeout, "positive"},
		{"negative timeout", func(r *Request) { r.Timeout = -time.Second }, ErrInvalidTimeout, "positive"},
		{"missing command", func(r *Request) { r.Command = []string{"omnidev-no-such-runtime", "run"} }, ErrRuntimeNotFound, "omnidev-no-such-runtime"},
		{"unknown preset", func(r *Request) { r.Runtime = "python" }, ErrRuntimeNotFound, "unknown [sandbox] runtime"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := request(sb, "console.log(1)\n")
			tt.change(&req)
			_, err := New(root, nil).Run(t.Context(), req)
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("Run() error = %v, want %v mentioning %q", err, tt.want, tt.msg)
			}
		})
	}
}

func TestLookupRuntime(t *testing.T) {
	empty := []string{"PATH=" + t.TempDir()}
	tests := []struct {
		runtime string
		command []string
		hint    string
	}{
		{"bun", nil, "npm install -g bun"},
		{"deno", nil, "npm install -g deno"},
		{"node", nil, "npm install -g tsx"},
		{"", []string{"my-runtime", "--flag"}, "install my-runtime or change [sandbox] runtime"},
	}
	for _, tt := range tests {
		t.Run(tt.runtime+strings.Join(tt.command, " "), func(t *testing.T) {
			_, err := LookupRuntime("", tt.runtime, tt.command, empty)
			if !errors.Is(err, ErrRuntimeNotFound) || !strings.Contains(err.Error(), tt.hint) {
				t.Errorf("LookupRuntime() error = %v, want ErrRuntimeNotFound with %q", err, tt.hint)
			}
		})
	}
	t.Run("found", func(t *testing.T) {
		bun := requireBun(t)
		got, err := LookupRuntime("", "bun", nil, []string{"PATH=" + filepath.Dir(bun)})
		if err != nil || got != bun {
			t.Errorf("LookupRuntime(bun) = %q, %v; want %q", got, err, bun)
		}
	})
}

// runtimesEnv names the runtimes besides Bun that TestRunRuntimes checks,
// comma-separated ("deno,node"). CI installs only Bun, so the others are
// opt-in; a runtime named here and missing is a failure.
const runtimesEnv = "OMNIDEV_TEST_RUNTIMES"

// TestRunRuntimes runs the runner semantics on every preset: Bun always,
// Deno and Node (tsx) when named in OMNIDEV_TEST_RUNTIMES.
func TestRunRuntimes(t *testing.T) {
	runtimes := []string{"bun"}
	if v := os.Getenv(runtimesEnv); v != "" {
		runtimes = append(runtimes, strings.Split(v, ",")...)
	}
	for _, rt := range runtimes {
		t.Run(rt, func(t *testing.T) {
			t.Parallel()
			if _, err := LookupRuntime("", rt, nil, os.Environ()); err != nil {
				t.Fatal(err)
			}
			root := t.TempDir()
			dir := filepath.Join(root, "omni", "capabilities", "tasks")
			testrepo.WriteFiles(t, dir, map[string]string{
				"index.ts": "export function double(n: number): number { return n * 2; }\n",
			})
			sb, err := runfolder.Prepare(root, &capability.Registry{Root: root,
				Capabilities: []*capability.Capability{{ID: "tasks", Module: "tasks", Dir: dir, Entry: "index.ts"}},
				Unavailable:  []*capability.Capability{{ID: "gh", Module: "github", Error: "GH_TOKEN is not set"}}})
			if err != nil {
				t.Fatal(err)
			}
			e := New(root, nil)
			run := func(code string) *Result {
				t.Helper()
				req := request(sb, code)
				req.Runtime = rt
				req.Env = os.Environ() // Deno and tsx need HOME for their caches
				req.Network = false    // as a locked-down config runs them

				res, err := e.Run(t.Context(), req)
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			res := run("import { double } from \"tasks\";\nconst n: number = double(2);\nexport async function main() { console.log(\"got\", n); return n; }\n")
			if res.ExitCode != 4 || res.Stdout != "got 4\n" {
				t.Errorf("import and return: exit %d, stdout %q, stderr %q", res.ExitCode, res.Stdout, res.Stderr)
			}
			testrepo.WriteFiles(t, root, map[string]string{"src/util.ts": "export const three: number = 3;\n"})
			res = run("import { three } from \"./src/util.ts\";\nconsole.log(three);\n")
			if res.ExitCode != 0 || res.Stdout != "3\n" {
				t.Errorf("relative import from the root: exit %d, stdout %q, stderr %q", res.ExitCode, res.Stdout, res.Stderr)
			}
			res = run("import { x } from \"github\";\nconsole.log(x);\n")
			if res.ExitCode != 1 || !strings.Contains(res.Stderr, `capability gh (module "github") is unavailable: GH_TOKEN is not set`) {
				t.Errorf("import of an unavailable capability: exit %d, stderr %q", res.ExitCode, res.Stderr)
			}
			res = run("import { double } from \"taks\";\nconsole.log(double);\n")
			if res.ExitCode == 0 || !strings.Contains(res.Stderr, "omnidev: there is no module `taks`; did you mean `tasks`?") {
				t.Errorf("a mistyped module: exit %d, stderr %q", res.ExitCode, res.Stderr)
			}
			res = run("export function main() { throw new Error(\"boom\"); }\n")
			if res.ExitCode != 1 || !strings.Contains(res.Stderr, "Error: boom") || !strings.Contains(res.Stderr, "main.ts") {
				t.Errorf("throw: exit %d, stderr %q", res.ExitCode, res.Stderr)
			}
		})
	}
}

// TestRunSlowProgress checks that a callback stuck delivering a report
// (a client not reading) does not delay the timeout.
func TestRunSlowProgress(t *testing.T) {
	requireBun(t)
	root := t.TempDir()
	req := request(prepare(t, root), "while (true) {}\n")
	req.Timeout = 600 * time.Millisecond
	var calls int
	req.Progress = func(Progress) {
		calls++
		time.Sleep(2 * time.Second)
	}
	res, err := New(root, nil).Run(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.DurationMS > 1500 {
		t.Errorf("timed_out=%v after %d ms, want the 600 ms timeout honoured", res.TimedOut, res.DurationMS)
	}
	if calls != 1 {
		t.Errorf("%d reports delivered, want 1 (the others skipped)", calls)
	}
}

// TestGate checks that the program does not start before release: the
// worktree is recorded while the runtime boots, and a program let through
// early would change files under the walk.
func TestGate(t *testing.T) {
	bun := requireBun(t)
	root := t.TempDir()
	sb := prepare(t, root)
	if err := sb.WriteMain("import { writeFileSync } from \"node:fs\";\nwriteFileSync(\"ran\", \"\");\n"); err != nil {
		t.Fatal(err)
	}
	prog := isolate.Program{Path: bun, Args: []string{sb.RunnerPath()}, Root: root, Dir: root, Network: true}
	p, err := start(isolate.New(), prog, nil, 1<<10)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // Bun boots in a few tens of ms
	if _, err := os.Stat(filepath.Join(root, "ran")); err == nil {
		p.abort()
		t.Fatal("the program ran before it was released")
	}
	p.release()
	if o := p.wait(t.Context(), 10*time.Second, nil); o.exitCode != 0 {
		stderr, _ := p.stderr.String()
		t.Fatalf("exit %d: %s", o.exitCode, stderr)
	}
	if _, err := os.Stat(filepath.Join(root, "ran")); err != nil {
		t.Errorf("the program did not run once released: %v", err)
	}
}
