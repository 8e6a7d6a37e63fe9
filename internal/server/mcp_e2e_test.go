package server_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/omnidev/omnidev/internal/testrepo"
)

// wrappedRepo is a repository whose capability "everything" wraps the MCP
// reference server (installed globally by CI: npm i -g
// @modelcontextprotocol/server-everything) and declares a secret.
func wrappedRepo(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("mcp-server-everything")
	if err != nil {
		t.Fatalf("mcp-server-everything is required (npm install -g @modelcontextprotocol/server-everything): %v", err)
	}
	root := t.TempDir()
	writeFile(t, root, "omni/config.toml", "[capabilities]\nenable = [\"everything\"]\n")
	writeFile(t, root, "omni/capabilities/everything/capability.toml", `[capability]
id = "everything"
description = "The MCP reference server"

[env]
EVERYTHING_TOKEN = { required = true, secret = true }

[mcp]
command = "`+bin+`"
args = ["stdio"]
env = { TOKEN_FOR_SERVER = "${EVERYTHING_TOKEN}" }
`)
	writeFile(t, root, ".omni/.env", "EVERYTHING_TOKEN=tok-e2e-123\n")
	writeFile(t, root, ".gitignore", ".omni/\n")
	git(t, root, "init", "-q", "-b", "main")
	return root
}

// serverPIDsIn lists the processes whose working folder is dir: the
// wrapped servers omnidev started there.
func serverPIDsIn(dir string) []string {
	entries, _ := os.ReadDir("/proc")
	var pids []string
	for _, e := range entries {
		if cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd")); err == nil && cwd == dir {
			if cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); strings.Contains(string(cmd), "mcp-server-everything") || strings.Contains(string(cmd), "server-everything") {
				pids = append(pids, e.Name())
			}
		}
	}
	return pids
}

func TestEndToEndWrappedServer(t *testing.T) {
	root := wrappedRepo(t)
	s := startServer(t, root)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()

	// Its tools are typed once the server has listed them.
	deadline := time.Now().Add(30 * time.Second)
	for {
		var q struct {
			TypeDefinitions string `json:"type_definitions"`
		}
		s.call(t, ctx, "omni_query", map[string]any{"include_types": true}, &q)
		if strings.Contains(q.TypeDefinitions, "declare module 'everything'") && strings.Contains(q.TypeDefinitions, "export function getSum(args: {") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no generated declarations for everything; type_definitions:\n%s", q.TypeDefinitions)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// A tool hit names the declaration of that tool alone, which a host
	// can read.
	var hits struct {
		Results []struct{ Source, Kind, URI string }
	}
	s.call(t, ctx, "omni_query", map[string]any{"query": "get-sum", "kinds": []string{"tool"}, "limit": 1}, &hits)
	const sumURI = "omni://everything/tools/get-sum.d.ts"
	if len(hits.Results) != 1 || hits.Results[0].Kind != "tool" || hits.Results[0].URI != sumURI {
		t.Fatalf("hits %+v; want the tool get-sum with uri %s", hits.Results, sumURI)
	}
	rr, err := s.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: sumURI})
	if err != nil || len(rr.Contents) != 1 || rr.Contents[0].MIMEType != "application/typescript" ||
		!strings.Contains(rr.Contents[0].Text, "declare module 'everything'") ||
		!strings.Contains(rr.Contents[0].Text, "export function getSum(args: {") || strings.Contains(rr.Contents[0].Text, "export function echo(") {
		t.Errorf("read %s: %v\n%+v", sumURI, err, rr)
	}
	if _, err := s.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: "omni://everything/tools/no-such-tool.d.ts"}); err == nil || !strings.Contains(err.Error(), `has no tool "no-such-tool"`) {
		t.Errorf("read of an unknown tool's declaration: %v", err)
	}

	code := `import { echo, getSum, call, tools } from "everything";
const r = await echo({ message: "hi" });
console.log(JSON.stringify(r));
console.log(JSON.stringify(await getSum({ a: 2, b: 3 })));
const w = await call("get-structured-content", { location: "New York" });
console.log("structured", typeof w.temperature);
const many = await Promise.all(Array.from({ length: 20 }, (_, i) => echo({ message: "m" + i })));
console.log("many", many.every((x, i) => x.text === "Echo: m" + i));
try { await call("get-structured-content", { location: "Paris" }); } catch (e) { console.log("isError rejected:", e.message); }
try { await call("no-such-tool", {}); } catch (e) { console.log("unknown rejected:", e.code, e.message); }
console.log("tools", tools.some((t) => t.name === "get-sum" && t.function === "getSum"));
console.log("secret", process.env.EVERYTHING_TOKEN === undefined && !JSON.stringify(process.env).includes("tok-e2e-123"));
const envText = (await call("get-env", {})).text;
console.log("server env:", envText);
// G2: the program itself must not get the value, not only its output.
console.log("program saw the secret:", envText.includes("tok-e2e-123"));
`
	var res struct {
		ExitCode int    `json:"exit_code"`
		Stdout   string `json:"stdout"`
		Stderr   string `json:"stderr"`
	}
	s.call(t, ctx, "omni_execute", map[string]any{"code": code}, &res)
	for _, want := range []string{
		`{"text":"Echo: hi","content":[{"type":"text","text":"Echo: hi"}]}`,
		`"text":"The sum of 2 and 3 is 5."`,
		"structured number",
		"many true",
		"isError rejected: MCP error -32602: Input validation error",
		"unknown rejected:",
		"tools true",
		"secret true",
		"program saw the secret: false",
	} {
		if !strings.Contains(res.Stdout, want) {
			t.Errorf("stdout lacks %q\nstdout:\n%s\nstderr:\n%s", want, res.Stdout, res.Stderr)
		}
	}
	if strings.Contains(s.stderr.String(), "tok-e2e-123") {
		t.Error("the secret appears in omnidev's log")
	}
	// The reference server's get-env hands its environment back: the
	// connection's secret is redacted from what the run reports.
	if !strings.Contains(res.Stdout, "TOKEN_FOR_SERVER") || strings.Contains(res.Stdout+res.Stderr, "tok-e2e-123") {
		t.Errorf("the run's output shows the connection secret, or get-env did not run:\n%s", res.Stdout)
	}
	if len(serverPIDsIn(root)) == 0 {
		t.Fatal("found no wrapped server process to check the shutdown against")
	}

	// kill -9 of omnidev leaves no wrapped server behind.
	s.cmd.Process.Signal(syscall.SIGKILL) // the session's cleanup reaps it
	testrepo.WaitFor(t, "the wrapped servers to exit with omnidev", 10*time.Second, func() bool { return len(serverPIDsIn(root)) == 0 })
}

// The end of stdin and SIGTERM stop omnidev gracefully, and its wrapped
// servers with it.
func TestEndToEndWrappedServerStops(t *testing.T) {
	for _, tc := range []struct {
		name string
		stop func(s *server)
	}{
		{"end of stdin", func(s *server) { s.session.Close() }}, // waits for omnidev to exit
		{"SIGTERM", func(s *server) {
			s.cmd.Process.Signal(syscall.SIGTERM)
			s.session.Wait()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := wrappedRepo(t)
			s := startServer(t, root)
			testrepo.WaitFor(t, "the wrapped server to start", 30*time.Second, func() bool { return len(serverPIDsIn(root)) > 0 })
			stopped := make(chan struct{})
			go func() {
				tc.stop(s)
				close(stopped)
			}()
			select {
			case <-stopped:
			case <-time.After(30 * time.Second):
				// Its goroutines say where it hangs.
				s.cmd.Process.Signal(syscall.SIGQUIT)
				select {
				case <-stopped:
				case <-time.After(10 * time.Second):
				}
				t.Fatalf("omnidev still runs 30 s after it was told to stop; its goroutines:\n%s", s.stderr)
			}
			// omnidev has exited; give the kernel a moment to reap.
			testrepo.WaitFor(t, "the wrapped servers to exit with omnidev", 5*time.Second, func() bool { return len(serverPIDsIn(root)) == 0 })
		})
	}
}

// A program importing a capability whose server cannot start learns why,
// naming the program, rather than that an export does not exist.
func TestEndToEndServerThatCannotStart(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "omni/config.toml", "[capabilities]\nenable = [\"broken\"]\n")
	writeFile(t, root, "omni/capabilities/broken/capability.toml", "[capability]\nid = \"broken\"\n[mcp]\ncommand = \"/no/such/server\"\n")
	writeFile(t, root, "prog.ts", `import { echo } from "broken";
console.log(await echo({ message: "x" }));
`)
	git(t, root, "init", "-q", "-b", "main")
	cmd := exec.Command(binary, "exec", "prog.ts")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "its MCP server is unavailable: start MCP server /no/such/server:") {
		t.Fatalf("omnidev exec: %v\n%s", err, out)
	}
}

func TestEndToEndExecStartsImportedServers(t *testing.T) {
	root := wrappedRepo(t)
	writeFile(t, root, "prog.ts", `import { getSum } from "everything";
console.log((await getSum({ a: 40, b: 2 })).text);
`)
	cmd := exec.Command(binary, "exec", "prog.ts")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "The sum of 40 and 2 is 42.") {
		t.Fatalf("omnidev exec: %v\n%s", err, out)
	}
	if pids := serverPIDsIn(root); len(pids) > 0 {
		t.Errorf("wrapped servers %v outlived omnidev exec", pids)
	}
}

// TestEndToEndMisbehavingServer runs programs against the relay's own test
// server: JSON-RPC errors, isError, structured content, large results, a
// crash mid-call, progress, and a run whose timeout cancels its calls.
func TestEndToEndMisbehavingServer(t *testing.T) {
	dir := t.TempDir()
	bin := buildTestServer(t)
	root := t.TempDir()
	cancelFile := filepath.Join(dir, "cancelled")
	writeFile(t, root, "omni/config.toml", "[capabilities]\nenable = [\"bad\"]\n")
	writeFile(t, root, "omni/capabilities/bad/capability.toml", `[capability]
id = "bad"
[mcp]
command = "`+bin+`"
env = { CANCEL_FILE = "`+cancelFile+`" }
`)
	git(t, root, "init", "-q", "-b", "main")
	s := startServer(t, root)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()

	type runResult struct {
		ExitCode int    `json:"exit_code"`
		Stdout   string `json:"stdout"`
		Stderr   string `json:"stderr"`
		TimedOut bool   `json:"timed_out"`
	}
	run := func(t *testing.T, code string, extra map[string]any) runResult {
		t.Helper()
		args := map[string]any{"code": code}
		for k, v := range extra {
			args[k] = v
		}
		var res runResult
		s.call(t, ctx, "omni_execute", args, &res)
		return res
	}
	tests := []struct {
		name string
		code string
		want []string
	}{
		{"JSON-RPC error", `import { call } from "bad";
try { await call("no-such-tool"); } catch (e) { console.log("code", e.code, e.message); }`, []string{"code -32602 unknown tool"}},
		{"isError", `import { fail } from "bad";
try { await fail(); } catch (e) { console.log("error:", e.message); }`, []string{"error: the widget is broken"}},
		{"structured content", `import { weather } from "bad";
console.log(JSON.stringify(await weather({ city: "Oslo" })));`, []string{`{"city":"Oslo","temperature":21.5}`}},
		{"large result", `import { big } from "bad";
const r = await big({ bytes: 16 * 1024 * 1024 - 1024 });
console.log("length", r.text.length);
try { await big({ bytes: 17 * 1024 * 1024 }); } catch (e) { console.log("too big:", e.message); }`, []string{"length 16776192", "over the 16 MiB limit"}},
		{"crash mid-call, then restart", `import { crash, echo } from "bad";
try { await crash(); } catch (e) { console.log("crash:", e.message); }
console.log((await echo({ message: "back" })).text);`, []string{"crash: call crash: MCP server", "exited during the call", "Echo: back"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, tt.code, nil)
			for _, w := range tt.want {
				if !strings.Contains(res.Stdout, w) {
					t.Errorf("stdout lacks %q\nstdout:\n%s\nstderr:\n%s", w, res.Stdout, res.Stderr)
				}
			}
		})
	}

	t.Run("progress of a wrapped call", func(t *testing.T) {
		for len(s.progress) > 0 {
			<-s.progress
		}
		params := &mcp.CallToolParams{Name: "omni_execute", Arguments: map[string]any{
			"code": `import { sleep } from "bad"; await sleep({ ms: 300 });`,
		}}
		params.SetProgressToken("wrapped-1")
		if _, err := s.session.CallTool(ctx, params); err != nil {
			t.Fatal(err)
		}
		var msgs []string
		for len(s.progress) > 0 {
			msgs = append(msgs, (<-s.progress).Message)
		}
		if !slices.Contains(msgs, "sleeping 1/2") {
			t.Errorf("progress messages %q, want the wrapped server's \"sleeping 1/2\"", msgs)
		}
	})

	t.Run("a changed tool list is typed and importable by the next run", func(t *testing.T) {
		res := run(t, `import { addTool } from "bad"; console.log((await addTool()).text);`, nil)
		if !strings.Contains(res.Stdout, "added") {
			t.Fatalf("add-tool: %+v", res)
		}
		added := time.Now()
		deadline := time.Now().Add(5 * time.Second)
		for {
			var q struct {
				TypeDefinitions string `json:"type_definitions"`
			}
			s.call(t, ctx, "omni_query", map[string]any{"include_types": true}, &q)
			var hits struct {
				Results []struct {
					Source string `json:"source"`
				} `json:"results"`
			}
			s.call(t, ctx, "omni_query", map[string]any{"query": "added while running", "kinds": []string{"tool"}}, &hits)
			if strings.Contains(q.TypeDefinitions, "export function freshTool(") && len(hits.Results) > 0 && hits.Results[0].Source == "tool:bad/fresh-tool" {
				t.Logf("fresh-tool typed and searchable %v after add-tool returned", time.Since(added).Round(time.Millisecond))
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("freshTool not declared and found within 5 s:\n%s", q.TypeDefinitions)
			}
			time.Sleep(50 * time.Millisecond)
		}
		res = run(t, `import { freshTool } from "bad"; console.log((await freshTool()).text);`, nil)
		if strings.TrimSpace(res.Stdout) != "fresh" {
			t.Fatalf("freshTool: %+v", res)
		}
	})

	t.Run("a run that times out cancels its calls", func(t *testing.T) {
		res := run(t, `import { sleep } from "bad"; await sleep({ ms: 30000 });`, map[string]any{"timeout_ms": 1500})
		if !res.TimedOut {
			t.Fatalf("run did not time out: %+v", res)
		}
		testrepo.WaitFor(t, "the wrapped server to see notifications/cancelled", 10*time.Second, func() bool {
			data, _ := os.ReadFile(cancelFile)
			return strings.Contains(string(data), "cancelled")
		})
	})
}

// TestEndToEndHTTPAndMemory wraps the reference server over Streamable HTTP
// (url form) and the memory server over stdio, with ${NAME} expanded from
// a capability's default, and calls both from one program.
func TestEndToEndHTTPAndMemory(t *testing.T) {
	everything, err := exec.LookPath("mcp-server-everything")
	if err != nil {
		t.Fatalf("mcp-server-everything is required (npm install -g @modelcontextprotocol/server-everything): %v", err)
	}
	memory, err := exec.LookPath("mcp-server-memory")
	if err != nil {
		t.Fatalf("mcp-server-memory is required (npm install -g @modelcontextprotocol/server-memory): %v", err)
	}
	port := freePort(t)
	http := exec.Command(everything, "streamableHttp")
	http.Env = append(os.Environ(), "PORT="+port)
	stderr := new(testrepo.Buffer)
	http.Stderr = stderr
	if err := http.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { http.Process.Kill(); http.Wait() })
	waitPort(t, port)

	root := t.TempDir()
	writeFile(t, root, "omni/config.toml", "[capabilities]\nenable = [\"web\", \"memory\"]\n")
	writeFile(t, root, "omni/capabilities/web/capability.toml", `[capability]
id = "web"
[env]
WEB_PORT = "`+port+`"
[mcp]
url = "http://127.0.0.1:${WEB_PORT}/mcp"
`)
	writeFile(t, root, "omni/capabilities/memory/capability.toml", `[capability]
id = "memory"
[env]
MEMORY_FILE = { default = ".omni/state/memory.json" }
[mcp]
command = "`+memory+`"
env = { MEMORY_FILE_PATH = "${OMNIDEV_ROOT}/${MEMORY_FILE}" }
`)
	writeFile(t, root, "prog.ts", `import { echo } from "web";
import { createEntities, readGraph } from "memory";
console.log((await echo({ message: "over http" })).text);
await createEntities({ entities: [{ name: "omnidev", entityType: "project", observations: ["wraps MCP servers"] }] });
const g = await readGraph({});
console.log("graph", JSON.stringify(g).includes("wraps MCP servers"));
`)
	git(t, root, "init", "-q", "-b", "main")
	cmd := exec.Command(binary, "exec", "prog.ts")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	for _, want := range []string{"Echo: over http", "graph true"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q (err %v):\n%s\nHTTP server stderr:\n%s", want, err, out, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(root, ".omni", "state", "memory.json")); err != nil {
		t.Errorf("memory file not where MEMORY_FILE's default put it: %v", err)
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

func waitPort(t *testing.T, port string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.Dial("tcp", "127.0.0.1:"+port)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing listens on port %s: %v", port, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// buildTestServer builds the relay's misbehaving test server.
func buildTestServer(t testing.TB) string {
	t.Helper()
	return testrepo.TestServer(t)
}

// With network = false the program's own connections fail while its calls
// to wrapped servers still go through the relay.
func TestEndToEndRelayWithoutNetwork(t *testing.T) {
	bin := buildTestServer(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok"))
			c.Close()
		}
	}()
	root := t.TempDir()
	writeFile(t, root, "omni/config.toml", "[capabilities]\nenable = [\"bad\"]\n[sandbox]\nnetwork = false\n")
	writeFile(t, root, "omni/capabilities/bad/capability.toml", "[capability]\nid = \"bad\"\n[mcp]\ncommand = \""+bin+"\"\n")
	writeFile(t, root, "prog.ts", `import { echo } from "bad";
console.log((await echo({ message: "through the relay" })).text);
try { await fetch("http://`+ln.Addr().String()+`/"); console.log("network reachable"); } catch (e) { console.log("network blocked"); }
`)
	git(t, root, "init", "-q", "-b", "main")
	cmd := exec.Command(binary, "exec", "prog.ts")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	for _, want := range []string{"Echo: through the relay", "network blocked"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q (err %v):\n%s", want, err, out)
		}
	}
}

// TestEndToEndHTTPAuthRefused wraps two Streamable HTTP servers that refuse
// omnidev: one answers 401 to a request without credentials, the other 403
// to the Authorization header it was given. A program calling either learns
// which header to set, the capability's summary shows the same error, and
// the token never leaves omnidev.
func TestEndToEndHTTPAuthRefused(t *testing.T) {
	refuse := func(status int) *httptest.Server {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="e2e"`)
			http.Error(w, http.StatusText(status), status)
		}))
		t.Cleanup(srv.Close)
		return srv
	}
	locked, forbidden := refuse(http.StatusUnauthorized), refuse(http.StatusForbidden)

	root := t.TempDir()
	writeFile(t, root, "omni/config.toml", "[capabilities]\nenable = [\"locked\", \"forbidden\"]\n")
	writeFile(t, root, "omni/capabilities/locked/capability.toml", `[capability]
id = "locked"
[mcp]
url = "`+locked.URL+`/mcp"
`)
	writeFile(t, root, "omni/capabilities/forbidden/capability.toml", `[capability]
id = "forbidden"
[env]
FORBIDDEN_TOKEN = { required = true, secret = true }
[mcp]
url = "`+forbidden.URL+`/mcp"
headers = { Authorization = "Bearer ${FORBIDDEN_TOKEN}" }
`)
	writeFile(t, root, ".omni/.env", "FORBIDDEN_TOKEN=tok-refused-456\n")
	writeFile(t, root, ".gitignore", ".omni/\n")
	git(t, root, "init", "-q", "-b", "main")
	s := startServer(t, root)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()

	want := map[string]string{
		"locked":    "answered 401 Unauthorized; set Authorization in [mcp] headers",
		"forbidden": "refused the Authorization header with 403 Forbidden",
	}
	// Each server is tried in the background at start; its error shows in
	// the summary once the attempt failed.
	deadline := time.Now().Add(30 * time.Second)
	for {
		var q struct {
			Summary []struct {
				ID    string `json:"id"`
				Error string `json:"error"`
			} `json:"summary"`
		}
		s.call(t, ctx, "omni_query", map[string]any{}, &q)
		got := make(map[string]string)
		for _, c := range q.Summary {
			got[c.ID] = c.Error
		}
		done := 0
		for id, w := range want {
			if strings.Contains(got[id], w) {
				done++
			}
		}
		if done == len(want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("summary errors %q, want them to contain %q", got, want)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// With no tool listed, the module itself rejects (an import, not a
	// missing export), so the program imports it where it can catch that.
	code := `const modules = { locked: () => import("locked"), forbidden: () => import("forbidden") };
for (const [name, load] of Object.entries(modules)) {
  try {
    const m = await load();
    await m.call("echo", { message: "hi" });
    console.log(name, "resolved");
  } catch (e) { console.log(name, "rejected:", e.message); }
}
`
	var res struct {
		ExitCode int    `json:"exit_code"`
		Stdout   string `json:"stdout"`
		Stderr   string `json:"stderr"`
	}
	s.call(t, ctx, "omni_execute", map[string]any{"code": code}, &res)
	lines := strings.Split(res.Stdout, "\n")
	for id, w := range want {
		if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, id+" rejected: ") && strings.Contains(l, w) }) {
			t.Errorf("stdout has no line %q ... %q\nstdout:\n%s\nstderr:\n%s", id+" rejected: ", w, res.Stdout, res.Stderr)
		}
	}
	if res.ExitCode != 0 {
		t.Errorf("exit code %d, want 0 (each rejection caught)\nstderr:\n%s", res.ExitCode, res.Stderr)
	}
	if strings.Contains(res.Stdout+res.Stderr+s.stderr.String(), "tok-refused-456") {
		t.Error("the token appears in the run's output or omnidev's log")
	}
}
