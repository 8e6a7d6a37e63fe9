package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/omnidev/omnidev/internal/isolate"
	"github.com/omnidev/omnidev/internal/testrepo"
	"github.com/omnidev/omnidev/internal/trust"
)

// binary is the omnidev binary built once for the end-to-end tests.
var binary string

func TestMain(m *testing.M) {
	// The in-process engines start isolated programs through this binary.
	if isolate.IsInit(os.Args) {
		os.Exit(isolate.Init())
	}
	// The tests approve the MCP servers they wrap by construction; the
	// tests of approval itself clear this for the servers they start.
	os.Setenv(trust.AllEnv, "1")
	dir, err := os.MkdirTemp("", "omnidev-e2e-*")
	// The key that signs run records goes in a config folder of the
	// tests' own, not the user's.
	os.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "omnidev")
	// omnidev-sandbox beside omnidev, as `just build` installs it: runs
	// start it as their init.
	if err := testrepo.GoBuild(dir, "github.com/omnidev/omnidev/cmd/omnidev", "github.com/omnidev/omnidev/cmd/omnidev-sandbox"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// repoRoot is this repository's root, whose omni/ is the fixture.
func repoRoot(t testing.TB) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// fixtureRepo copies this repository's omni/ into a new git repository with
// one committed file, and returns its root.
func fixtureRepo(t testing.TB) string {
	t.Helper()
	root := t.TempDir()
	if err := os.CopyFS(filepath.Join(root, "omni"), os.DirFS(filepath.Join(repoRoot(t), "omni"))); err != nil {
		t.Fatal(err)
	}
	writeFile(t, root, ".gitignore", ".omni/\n")
	writeFile(t, root, "README.md", "# fixture\n\nline two\n")
	git(t, root, "init", "-q", "-b", "main")
	git(t, root, "add", "-A")
	git(t, root, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "fixture")
	return root
}

func writeFile(t testing.TB, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func git(t testing.TB, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// server is a running omnidev binary with a connected client.
type server struct {
	cmd      *exec.Cmd
	session  *mcp.ClientSession
	stderr   *testrepo.Buffer
	progress chan *mcp.ProgressNotificationParams
	// listChanged receives "prompts" and "resources" for their list_changed
	// notifications; updated, the URIs of resources/updated.
	listChanged chan string
	updated     chan string
}

// startServer starts `omnidev serve` in root and connects a client to it.
func startServer(t testing.TB, root string, extraEnv ...string) *server {
	t.Helper()
	s := &server{stderr: new(testrepo.Buffer), progress: make(chan *mcp.ProgressNotificationParams, 64),
		listChanged: make(chan string, 16), updated: make(chan string, 16)}
	send := func(ch chan string, v string) {
		select {
		case ch <- v:
		default:
		}
	}
	s.cmd = exec.Command(binary, "serve", "--log-level", "info")
	s.cmd.Dir = root
	s.cmd.Env = append(os.Environ(), extraEnv...)
	s.cmd.Stderr = s.stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			select {
			case s.progress <- r.Params:
			default:
			}
		},
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { send(s.listChanged, "prompts") },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { send(s.listChanged, "resources") },
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			send(s.updated, r.Params.URI)
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: s.cmd, TerminateDuration: 5 * time.Second}, nil)
	if err != nil {
		t.Fatalf("connect: %v\nstderr:\n%s", err, s.stderr)
	}
	s.session = session
	t.Cleanup(func() {
		session.Close()
		if t.Failed() {
			t.Logf("server stderr:\n%s", s.stderr)
		}
	})
	return s
}

// call calls a tool and decodes its JSON text content into out (if not nil).
func (s *server) call(t testing.TB, ctx context.Context, tool string, args map[string]any, out any) *mcp.CallToolResult {
	t.Helper()
	res, err := s.session.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", tool, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("call %s: %d content blocks, want 1", tool, len(res.Content))
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if res.StructuredContent != nil {
		// omni_execute's text is a summary; the result is the structured content.
		data, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		text = string(data)
	}
	if !json.Valid([]byte(text)) {
		t.Fatalf("call %s: text content is not JSON: %s", tool, text)
	}
	if out != nil {
		if err := json.Unmarshal([]byte(text), out); err != nil {
			t.Fatalf("call %s: decode %s: %v", tool, text, err)
		}
	}
	return res
}

// wantToolError calls a tool and checks that it answers with a tool error
// whose text mentions want.
func (s *server) wantToolError(t *testing.T, ctx context.Context, tool string, args map[string]any, want string) {
	t.Helper()
	res, err := s.session.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil || len(res.Content) != 1 {
		t.Fatalf("call %s: %v %+v; want a tool error", tool, err, res)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if !res.IsError || !strings.Contains(text, want) {
		t.Errorf("isError=%v text=%.200s; want a tool error mentioning %q", res.IsError, text, want)
	}
}

func TestEndToEndStdio(t *testing.T) {
	root := fixtureRepo(t)
	s := startServer(t, root)
	ctx := t.Context()

	init := s.session.InitializeResult()
	if init.ServerInfo.Name != "omnidev" || !strings.Contains(init.Instructions, "omni_query") {
		t.Errorf("initialize: server %q, instructions %q", init.ServerInfo.Name, init.Instructions)
	}
	tools, err := s.session.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	if strings.Join(names, ",") != "omni_execute,omni_query" {
		t.Errorf("tools = %v, want omni_execute and omni_query", names)
	}

	t.Run("query summary", func(t *testing.T) {
		var out struct {
			Results         []any `json:"results"`
			Summary         []struct{ ID, Module string }
			TypeDefinitions string `json:"type_definitions"`
		}
		s.call(t, ctx, "omni_query", map[string]any{}, &out)
		if len(out.Results) != 0 || len(out.Summary) != 3 || out.Summary[2].Module != "omnidev" {
			t.Fatalf("empty query: %d results, summary %v; want 0 results and repo, tasks and the built-in omnidev", len(out.Results), out.Summary)
		}
		for _, m := range []string{"declare module 'repo'", "declare module 'tasks'", "declare module 'omnidev'"} {
			if !strings.Contains(out.TypeDefinitions, m) {
				t.Errorf("type definitions lack %q", m)
			}
		}
	})

	t.Run("query hits", func(t *testing.T) {
		var out struct {
			Results []struct{ Source, Kind, Snippet string }
			Total   int
		}
		s.call(t, ctx, "omni_query", map[string]any{"query": "complete a taks"}, &out)
		if len(out.Results) == 0 {
			t.Fatalf("no results for a typo of task: %+v", out)
		}
		found := false
		for _, r := range out.Results {
			found = found || strings.Contains(r.Source, "tasks")
		}
		if !found {
			t.Errorf("no tasks result for 'complete a taks': %+v", out.Results)
		}
	})

	t.Run("query bad input", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			args map[string]any
			want string
		}{
			{"limit too big", map[string]any{"query": "x", "limit": 500}, "maximum"},
			{"limit zero", map[string]any{"query": "x", "limit": 0}, "minimum"},
			{"long query", map[string]any{"query": strings.Repeat("a", 1001)}, "1000"},
			{"unknown kind", map[string]any{"query": "x", "kinds": []string{"bogus"}}, "capability"},
			{"limit of the wrong type", map[string]any{"query": "x", "limit": "ten"}, `want "integer"`},
			{"unknown argument", map[string]any{"query": "x", "lmit": 3}, `unexpected additional properties ["lmit"]`},
		} {
			t.Run(tc.name, func(t *testing.T) { s.wantToolError(t, ctx, "omni_query", tc.args, tc.want) })
		}
	})

	t.Run("execute", func(t *testing.T) {
		var out struct {
			ExitCode     int                                        `json:"exit_code"`
			Stdout       string                                     `json:"stdout"`
			ChangedFiles []string                                   `json:"changed_files"`
			DiffStat     struct{ Files, Insertions, Deletions int } `json:"diff_stat"`
		}
		code := `import { addTask, listTasks } from "tasks";
import { writeFile } from "repo";
export async function main() {
  await addTask("write the report");
  await writeFile("notes/today.md", "one\ntwo\n");
  console.log((await listTasks()).length);
  return 3;
}`
		res := s.call(t, ctx, "omni_execute", map[string]any{"code": code}, &out)
		if res.IsError || out.ExitCode != 3 || strings.TrimSpace(out.Stdout) != "1" {
			t.Fatalf("isError=%v exit=%d stdout=%q", res.IsError, out.ExitCode, out.Stdout)
		}
		if strings.Join(out.ChangedFiles, ",") != "notes/today.md" || out.DiffStat.Insertions != 2 {
			t.Errorf("changed %v %+v; want only notes/today.md with 2 insertions (.omni/ is never reported)", out.ChangedFiles, out.DiffStat)
		}
	})

	t.Run("execute bad input", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			args map[string]any
			want string
		}{
			{"empty code", map[string]any{"code": ""}, "code"},
			{"zero timeout", map[string]any{"code": "1", "timeout_ms": 0}, "timeout_ms"},
			{"code too large", map[string]any{"code": strings.Repeat("/", 1<<20+1)}, "limit is 1048576"},
			{"no code at all", map[string]any{}, "code"},
			{"code of the wrong type", map[string]any{"code": 42}, `want "string"`},
		} {
			t.Run(tc.name, func(t *testing.T) { s.wantToolError(t, ctx, "omni_execute", tc.args, tc.want) })
		}
	})

	t.Run("progress", func(t *testing.T) {
		params := &mcp.CallToolParams{Name: "omni_execute", Arguments: map[string]any{
			"code": `console.log("working"); await new Promise(r => setTimeout(r, 1600));`,
		}}
		params.SetProgressToken("run-1")
		if _, err := s.session.CallTool(ctx, params); err != nil {
			t.Fatal(err)
		}
		var got []*mcp.ProgressNotificationParams
		for len(s.progress) > 0 {
			got = append(got, <-s.progress)
		}
		// At least one a second: a 1.6 s program gets at least one.
		if len(got) == 0 || got[0].ProgressToken != "run-1" || !strings.Contains(got[len(got)-1].Message, "bytes of stdout") {
			t.Fatalf("progress notifications: %+v", got)
		}
		for i := 1; i < len(got); i++ {
			if got[i].Progress <= got[i-1].Progress {
				t.Errorf("progress does not increase: %v then %v", got[i-1].Progress, got[i].Progress)
			}
		}
	})

	t.Run("concurrent calls each get their own result", func(t *testing.T) {
		var wg sync.WaitGroup
		for i := range 4 {
			wg.Go(func() {
				var out struct {
					ExitCode int `json:"exit_code"`
					Stdout   string
				}
				s.call(t, ctx, "omni_execute", map[string]any{"code": fmt.Sprintf("export function main() { console.log(%d); return %d }", i, 10+i)}, &out)
				if out.ExitCode != 10+i || strings.TrimSpace(out.Stdout) != fmt.Sprint(i) {
					t.Errorf("call %d got exit %d, stdout %q", i, out.ExitCode, out.Stdout)
				}
			})
		}
		wg.Wait()
	})

	t.Run("pid file", func(t *testing.T) {
		data, err := os.ReadFile(filepath.Join(root, ".omni", "server.pid"))
		if err != nil || strings.TrimSpace(string(data)) != fmt.Sprint(s.cmd.Process.Pid) {
			t.Errorf("PID file = %q, %v; want %d", data, err, s.cmd.Process.Pid)
		}
	})

	// The end of stdin stops the server and removes its PID file.
	if err := s.session.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, ".omni", "server.pid")); !os.IsNotExist(err) {
		t.Errorf("PID file still there after stdin closed: %v", err)
	}
	if !strings.Contains(s.stderr.String(), "server stopped") {
		t.Errorf("no 'server stopped' line in the log:\n%s", s.stderr)
	}
}

// startHanging calls omni_execute through cs with a program that starts a
// `sleep` child, records that it did, then waits forever. It returns the
// child's pid as the host sees it (the program sees another one, from
// inside its PID namespace) and a channel that gets the call's error when
// the call returns. Tests use it to check that nothing a run started
// outlives the run. A call that returns before the child is running (a
// tool or protocol error) fails the test at once, with what it returned.
func startHanging(t testing.TB, ctx context.Context, cs *mcp.ClientSession, root string) (child int, done <-chan error) {
	t.Helper()
	startedFile := filepath.Join(root, "child.started")
	// A duration no other process uses names the child among the host's.
	marker := fmt.Sprintf("600.%09d", time.Now().UnixNano()%1e9)
	code := fmt.Sprintf(`import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
const child = spawn("sleep", [%q], { stdio: "ignore" });
writeFileSync(%q, String(child.pid));
await new Promise(() => {});`, marker, startedFile)
	type call struct {
		res *mcp.CallToolResult
		err error
	}
	calls := make(chan call, 1)
	errs := make(chan error, 1)
	go func() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "omni_execute", Arguments: map[string]any{"code": code}})
		calls <- call{res, err}
		errs <- err
	}()
	deadline := time.After(20 * time.Second)
	for {
		if data, err := os.ReadFile(startedFile); err == nil {
			if runtime.GOOS != "linux" {
				// No PID namespace there: the program's pid is the host's.
				if _, err := fmt.Sscan(string(data), &child); err == nil {
					return child, errs
				}
			} else if pids := processesRunning("sleep", marker); len(pids) == 1 {
				return pids[0], errs
			}
		}
		select {
		case c := <-calls:
			text := ""
			if c.res != nil && len(c.res.Content) > 0 {
				text = c.res.Content[0].(*mcp.TextContent).Text
			}
			t.Fatalf("omni_execute returned before the program started its child: error %v, result %.500s", c.err, text)
		case <-deadline:
			t.Fatal("timed out after 20s waiting for the program's child")
		case <-time.After(25 * time.Millisecond):
		}
	}
}

// processesRunning returns the host pids of the processes whose command
// line is exactly argv.
func processesRunning(argv ...string) []int {
	want := strings.Join(argv, "\x00") + "\x00"
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil && string(data) == want {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestEndToEndCancel checks that cancelling a call through the client kills
// the running program and everything it started.
func TestEndToEndCancel(t *testing.T) {
	root := fixtureRepo(t)
	s := startServer(t, root)
	ctx, cancel := context.WithCancel(t.Context())
	child, done := startHanging(t, ctx, s.session, root)
	cancel()
	<-done
	testrepo.WaitFor(t, "the program's child to die", 5*time.Second, func() bool { return !testrepo.Alive(child) })
}
