package relay

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omnidev/omnidev/internal/capability"
	"github.com/omnidev/omnidev/internal/testrepo"
	"github.com/omnidev/omnidev/internal/tsgen"
)

// testServer is the misbehaving server of ./testdata/testserver, built once.
var testServer string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "relay-test-*")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testServer = filepath.Join(dir, "testserver")
	if err := testrepo.GoBuild(testServer, "github.com/omnidev/omnidev/internal/relay/testdata/testserver"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// fixture is a relay with one stdio test server as capability "t".
type fixture struct {
	r          *Relay
	log        *syncBuffer
	dir        string
	cancelFile string
	pidFile    string
	mu         sync.Mutex
	changes    int
}

func newFixture(t *testing.T, timeout time.Duration) *fixture {
	t.Helper()
	f := &fixture{dir: t.TempDir(), log: new(syncBuffer)}
	f.cancelFile = filepath.Join(f.dir, "cancelled")
	f.pidFile = filepath.Join(f.dir, "pid")
	f.r = New(Options{
		Environ:  []string{"PATH=" + os.Getenv("PATH"), "HOME=/home/x", "SECRET_OF_OMNIDEV=s3cret", "LANG=C.UTF-8"},
		Logger:   slog.New(slog.NewTextHandler(f.log, nil)),
		OnChange: func(string) { f.mu.Lock(); f.changes++; f.mu.Unlock() },
	})
	t.Cleanup(func() { f.r.Close() })
	f.r.Sync(map[string]*capability.MCPServer{"t": {
		Transport: capability.TransportStdio, Command: testServer, Dir: f.dir, Timeout: timeout,
		Env: map[string]string{"CANCEL_FILE": f.cancelFile, "PID_FILE": f.pidFile, "FROM_MCP_ENV": "yes"},
	}}, true)
	return f
}

// call calls a tool and decodes its CallToolResult.
func (f *fixture) call(t *testing.T, ctx context.Context, tool string, args map[string]any) (map[string]any, error) {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	data, err := f.r.Call(ctx, "t", tool, raw, nil)
	if err != nil {
		return nil, err
	}
	var res map[string]any
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatalf("decode result: %v", err)
	}
	return res, nil
}

func resultText(res map[string]any) string {
	var parts []string
	items, _ := res["content"].([]any)
	for _, it := range items {
		if m, ok := it.(map[string]any); ok && m["type"] == "text" {
			parts = append(parts, m["text"].(string))
		}
	}
	return strings.Join(parts, "\n")
}

func TestCallResults(t *testing.T) {
	f := newFixture(t, 0)
	tests := []struct {
		name    string
		tool    string
		args    map[string]any
		check   func(map[string]any) string // "" when fine
		wantErr string
	}{
		{name: "text", tool: "echo", args: map[string]any{"message": "hi"}, check: func(r map[string]any) string {
			return unless(resultText(r) == "Echo: hi", "text %q", resultText(r))
		}},
		{name: "isError passes through", tool: "fail", check: func(r map[string]any) string {
			return unless(r["isError"] == true && resultText(r) == "the widget is broken", "result %v", r)
		}},
		{name: "structured content", tool: "weather", args: map[string]any{"city": "Oslo"}, check: func(r map[string]any) string {
			sc, _ := r["structuredContent"].(map[string]any)
			return unless(sc["city"] == "Oslo" && sc["temperature"] == 21.5, "structuredContent %v", r["structuredContent"])
		}},
		// Results near and over the 16 MiB cap are tested end to end
		// (server package): under the race detector they take a minute.
		{name: "large result arrives whole", tool: "big", args: map[string]any{"bytes": 1 << 20}, check: func(r map[string]any) string {
			return unless(len(resultText(r)) == 1<<20, "text of %d bytes", len(resultText(r)))
		}},
		{name: "JSON-RPC error", tool: "no-such-tool", wantErr: "no-such-tool"},
		{name: "exact environment", tool: "env", check: func(r map[string]any) string {
			var names []string
			for _, kv := range strings.Split(resultText(r), "\n") {
				names = append(names, strings.SplitN(kv, "=", 2)[0])
			}
			slices.Sort(names)
			want := []string{"CANCEL_FILE", "FROM_MCP_ENV", "HOME", "LANG", "PATH", "PID_FILE"}
			return unless(slices.Equal(names, want), "environment names %q, want %q", names, want)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := f.call(t, t.Context(), tt.tool, tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if msg := tt.check(res); msg != "" {
				t.Error(msg)
			}
		})
	}
}

// syncBuffer is a log destination the test reads while the relay writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func unless(ok bool, format string, args ...any) string {
	if ok {
		return ""
	}
	return fmt.Sprintf(format, args...)
}

func TestJSONRPCErrorCode(t *testing.T) {
	f := newFixture(t, 0)
	_, err := f.r.Call(t.Context(), "t", "no-such-tool", nil, nil)
	ce, ok := err.(*CallError)
	if !ok || ce.Code == 0 {
		t.Fatalf("error %#v, want a CallError with the JSON-RPC code", err)
	}
}

func TestCrashRestarts(t *testing.T) {
	f := newFixture(t, 0)
	if _, err := f.call(t, t.Context(), "crash", nil); err == nil || !strings.Contains(err.Error(), "exited during the call") {
		t.Fatalf("crash: error %v, want the server's exit", err)
	}
	testrepo.WaitFor(t, "the exit to be recorded", 10*time.Second, func() bool { _, started, _, _ := f.r.State("t"); return !started })
	if _, _, _, err := f.r.State("t"); err == nil || !strings.Contains(err.Error(), "exited") {
		t.Errorf("state error %v, want the exit", err)
	}
	res, err := f.call(t, t.Context(), "echo", map[string]any{"message": "again"})
	if err != nil || resultText(res) != "Echo: again" {
		t.Fatalf("call after the crash: %v, %v; want the server restarted", res, err)
	}
	// A second crash in a row waits for a backoff before the next start.
	f.call(t, t.Context(), "crash", nil)
	testrepo.WaitFor(t, "the second exit", 10*time.Second, func() bool { _, started, _, _ := f.r.State("t"); return !started })
	if _, err := f.call(t, t.Context(), "echo", map[string]any{"message": "x"}); err == nil || !strings.Contains(err.Error(), "next restart in") {
		t.Fatalf("call right after a second crash: %v, want the backoff named", err)
	}
}

func TestCancellation(t *testing.T) {
	tests := []struct {
		name    string
		timeout time.Duration // [mcp] timeout
		cancel  bool          // cancel the caller's context
		wantErr string
	}{
		{name: "[mcp] timeout", timeout: 200 * time.Millisecond, wantErr: "no answer within the [mcp] timeout"},
		{name: "run ends", cancel: true, wantErr: "cancelled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tt.timeout)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			if tt.cancel {
				f.r.Ensure(ctx, []string{"t"})
				time.AfterFunc(200*time.Millisecond, cancel)
			}
			_, err := f.call(t, ctx, "sleep", map[string]any{"ms": 20000})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %v, want %q", err, tt.wantErr)
			}
			testrepo.WaitFor(t, "notifications/cancelled to reach the server", 10*time.Second, func() bool {
				data, _ := os.ReadFile(f.cancelFile)
				return strings.Contains(string(data), "cancelled")
			})
		})
	}
}

func TestProgressAndToolListChanged(t *testing.T) {
	f := newFixture(t, 0)
	var mu sync.Mutex
	var msgs []string
	if _, err := f.r.Call(t.Context(), "t", "sleep", json.RawMessage(`{"ms":10}`), func(m string) { mu.Lock(); msgs = append(msgs, m); mu.Unlock() }); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if !slices.Contains(msgs, "sleeping 1/2") {
		t.Errorf("progress %q, want \"sleeping 1/2\"", msgs)
	}
	mu.Unlock()
	testrepo.WaitFor(t, "the server's log message in omnidev's log", 10*time.Second, func() bool {
		return strings.Contains(f.log.String(), `msg="wrapped MCP server log" capability=t logger=testserver data="sleep started"`)
	})

	if _, err := f.call(t, t.Context(), "add-tool", nil); err != nil {
		t.Fatal(err)
	}
	testrepo.WaitFor(t, "fresh-tool to be listed", 10*time.Second, func() bool {
		tools, _, _, _ := f.r.State("t")
		return slices.ContainsFunc(tools, func(tl capability.Tool) bool { return tl.Name == "fresh-tool" })
	})
}

func TestCloseLeavesNoServer(t *testing.T) {
	f := newFixture(t, 0)
	f.r.Ensure(t.Context(), []string{"t"})
	data, err := os.ReadFile(f.pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	f.r.Close()
	if testrepo.Alive(pid) {
		t.Fatalf("server %d still runs after Close", pid)
	}
}

func TestStartFailureNamesProgram(t *testing.T) {
	r := New(Options{})
	defer r.Close()
	r.Sync(map[string]*capability.MCPServer{"x": {Transport: capability.TransportStdio, Command: "/nonexistent/server-bin"}}, true)
	_, err := r.Call(t.Context(), "x", "echo", nil, nil)
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/server-bin") {
		t.Fatalf("error %v, want one naming the program", err)
	}
	if _, started, _, err := r.State("x"); err == nil || started {
		t.Errorf("state: started %v, error %v; want the start error", started, err)
	}
}

// startHTTPServer starts the test server on Streamable HTTP, with args,
// and returns its URL.
func startHTTPServer(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(testServer, append([]string{"-http", "127.0.0.1:0"}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	url, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(url)
}

func TestHTTP(t *testing.T) {
	url := startHTTPServer(t, "-token", "tok")
	tests := []struct {
		name    string
		headers map[string]string
		wantErr string
	}{
		{name: "no header", wantErr: "set Authorization in [mcp] headers"},
		{name: "wrong token", headers: map[string]string{"Authorization": "Bearer nope"}, wantErr: "refused the Authorization header"},
		{name: "token", headers: map[string]string{"Authorization": "Bearer tok"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := New(Options{})
			defer r.Close()
			r.Sync(map[string]*capability.MCPServer{"h": {Transport: capability.TransportHTTP, URL: url, Headers: tt.headers}}, true)
			data, err := r.Call(t.Context(), "h", "echo", json.RawMessage(`{"message":"over http"}`), nil)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "nope") {
					t.Fatalf("error %v, want %q and no token", err, tt.wantErr)
				}
				return
			}
			if err != nil || !strings.Contains(string(data), "Echo: over http") {
				t.Fatalf("call: %s, %v", data, err)
			}
		})
	}
}

// TestStdioAndHTTPGiveTheSameResults calls the same server over stdio and
// over Streamable HTTP: a program must get the same bytes either way, for
// text, a tool error, structured content (as the SDK makes it, and as a
// server wrote it) and a JSON-RPC error alike.
func TestStdioAndHTTPGiveTheSameResults(t *testing.T) {
	r := New(Options{})
	defer r.Close()
	r.Sync(map[string]*capability.MCPServer{
		"stdio": {Transport: capability.TransportStdio, Command: testServer, Dir: t.TempDir()},
		"http":  {Transport: capability.TransportHTTP, URL: startHTTPServer(t)},
	}, true)
	for _, tt := range []struct{ tool, args string }{
		{"echo", `{"message":"same <shape> & \u00e9"}`},
		{"fail", `{}`},
		{"weather", `{"city":"Oslo"}`},
		{"unsorted", `{}`},
		{"no-such-tool", `{}`},
	} {
		t.Run(tt.tool, func(t *testing.T) {
			var got [2]string
			for i, id := range []string{"stdio", "http"} {
				data, err := r.Call(t.Context(), id, tt.tool, json.RawMessage(tt.args), nil)
				if err != nil {
					b, _ := json.Marshal(err)
					data = append([]byte("error "), b...)
				}
				got[i] = string(data)
			}
			if got[0] != got[1] {
				t.Errorf("over stdio:\n%s\nover HTTP:\n%s", got[0], got[1])
			}
		})
	}
}

// The socket: a run's token admits it, answers come back by id in any
// order, an unknown token is refused, and ending the run cancels its calls.
func TestChannel(t *testing.T) {
	f := newFixture(t, 0)
	rel := "r.sock"
	path := filepath.Join(f.dir, strings.Repeat("long-folder-name/", 8), rel) // longer than sun_path
	if err := f.r.Listen(path, rel); err != nil {
		t.Fatal(err)
	}
	env, end := f.r.BeginRun(t.Context(), nil, nil, nil, nil)
	var token string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, tsgen.EnvToken+"="); ok {
			token = v
		}
	}
	if !slices.Contains(env, tsgen.EnvSocket+"="+rel) || token == "" {
		t.Fatalf("run env %q, want the socket and a token", env)
	}
	t.Chdir(filepath.Dir(path)) // programs connect by the relative path
	dial := func(tok string) (net.Conn, *bufio.Reader) {
		c, err := net.Dial("unix", rel)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		fmt.Fprintf(c, "{\"token\":%q}\n", tok)
		return c, bufio.NewReader(c)
	}

	c, br := dial(token)
	fmt.Fprintln(c, `{"id":1,"capability":"t","tool":"sleep","args":{"ms":20000}}`)
	fmt.Fprintln(c, `{"id":2,"capability":"t","tool":"echo","args":{"message":"a"}}`)
	fmt.Fprintln(c, `{"id":3,"capability":"t","tool":"echo","args":{"message":"b"}}`)
	got := map[float64]string{}
	for len(got) < 2 {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		var msg struct {
			ID     float64         `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		json.Unmarshal([]byte(line), &msg)
		got[msg.ID] = string(msg.Result)
	}
	if !strings.Contains(got[2], "Echo: a") || !strings.Contains(got[3], "Echo: b") {
		t.Errorf("answers %v, want each echo by its id while the sleep is in flight", got)
	}
	// A request that is not one gets an error line, and the next is answered;
	// args null or left out are no arguments.
	for _, bad := range []string{`not json`, `{"capability":"t","tool":"echo"}`, `{"id":4,"capability":"t","tool":"echo","args":[1]}`, `{"id":5,"capability":"t","tool":"echo","args":"x"}`} {
		fmt.Fprintln(c, bad)
		if line, err := br.ReadString('\n'); err != nil || !strings.Contains(line, "a request must be one JSON line") {
			t.Errorf("request %s: answer %q, %v; want an error line", bad, line, err)
		}
	}
	for _, args := range []string{`,"args":null`, ``} {
		fmt.Fprintf(c, `{"id":6,"capability":"t","tool":"env"%s}`+"\n", args)
		if line, err := br.ReadString('\n'); err != nil || !strings.Contains(line, `"id":6,"result"`) {
			t.Errorf("a call with no arguments (%q): answer %q, %v", args, line, err)
		}
	}
	end()
	testrepo.WaitFor(t, "the run's sleep to be cancelled", 10*time.Second, func() bool {
		data, _ := os.ReadFile(f.cancelFile)
		return strings.Contains(string(data), "cancelled")
	})

	_, br2 := dial("not-a-token")
	line, _ := br2.ReadString('\n')
	if !strings.Contains(line, "does not know this run") {
		t.Errorf("unknown token got %q, want a refusal", line)
	}
}

// A process the server started in a session of its own escapes its
// process group and may hold the server's stderr open: closing the relay
// still ends once the server has exited, without waiting for that process.
func TestCloseNotHeldByEscapedProcess(t *testing.T) {
	f := newFixture(t, 0)
	res, err := f.call(t, t.Context(), "detach", nil)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(resultText(res))
	if err != nil {
		t.Fatalf("detach answered %q", resultText(res))
	}
	t.Cleanup(func() { testrepo.Kill(pid) })
	closed := make(chan struct{})
	go func() {
		f.r.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(4 * terminateGrace):
		t.Fatalf("Close still waits for the escaped process %d after %v", pid, 4*terminateGrace)
	}
}
