package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/omnidev/omnidev/internal/testrepo"
)

// serveHTTP starts `omnidev serve --http 127.0.0.1:0` and returns the URL
// it recorded in .omni/server.json.
func serveHTTP(t testing.TB, root string, args ...string) (string, *exec.Cmd, *testrepo.Buffer) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"serve", "--http", "127.0.0.1:0"}, args...)...)
	cmd.Dir = root
	stderr := new(testrepo.Buffer)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		<-exited
		if t.Failed() {
			t.Logf("server stderr:\n%s", stderr)
		}
	})
	var info struct {
		URL       string
		PID       int
		Transport string
	}
	testrepo.WaitFor(t, "server.json", reloadWait, func() bool {
		data, err := os.ReadFile(filepath.Join(root, ".omni", "server.json"))
		return err == nil && json.Unmarshal(data, &info) == nil && info.PID == cmd.Process.Pid
	})
	if info.Transport != "http" || !strings.HasPrefix(info.URL, "http://127.0.0.1:") || !strings.HasSuffix(info.URL, "/mcp") {
		t.Errorf("server.json = %+v", info)
	}
	if !strings.Contains(stderr.String(), info.URL) {
		t.Errorf("the URL is not printed on stderr:\n%s", stderr)
	}
	return info.URL, cmd, stderr
}

// bearer adds an Authorization header to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func TestEndToEndHTTP(t *testing.T) {
	root := fixtureRepo(t)
	const token = "e2e-token"
	url, cmd, stderr := serveHTTP(t, root, "--token", token)
	connect := func(rt http.RoundTripper) (*mcp.ClientSession, error) {
		client := mcp.NewClient(&mcp.Implementation{Name: "e2e-http", Version: "1"}, nil)
		return client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: rt}}, nil)
	}
	if cs, err := connect(http.DefaultTransport); err == nil {
		cs.Close()
		t.Fatal("connected without the token")
	}
	// Two sessions share one server: its registry, index and executor.
	var sessions []*mcp.ClientSession
	for range 2 {
		cs, err := connect(bearer{token})
		if err != nil {
			t.Fatalf("connect with the token: %v", err)
		}
		defer cs.Close()
		sessions = append(sessions, cs)
	}
	for i, cs := range sessions {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "omni_execute", Arguments: map[string]any{
			"code": fmt.Sprintf("export function main() { console.log('session %d'); return %d }", i, i),
		}})
		if err != nil {
			t.Fatal(err)
		}
		var out struct {
			ExitCode int `json:"exit_code"`
			Stdout   string
		}
		data, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(data, &out)
		if out.ExitCode != i || strings.TrimSpace(out.Stdout) != fmt.Sprintf("session %d", i) {
			t.Errorf("session %d: %+v", i, out)
		}
	}

	t.Run("a 1 MiB program is admitted", func(t *testing.T) {
		code := "// " + strings.Repeat("x", 1<<20-64) + "\nconsole.log('big')\n"
		res, err := sessions[0].CallTool(t.Context(), &mcp.CallToolParams{Name: "omni_execute", Arguments: map[string]any{"code": code}})
		if err != nil || res.IsError {
			t.Fatalf("err %v, result %+v", err, res)
		}
	})

	t.Run("a client that disconnects mid-run gets its program killed", func(t *testing.T) {
		cs, err := connect(bearer{token})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		child, _ := startHanging(t, ctx, cs, root)
		cancel()
		cs.Close()
		testrepo.WaitFor(t, "the program's child to die", 5*time.Second, func() bool { return !testrepo.Alive(child) })
	})

	t.Run("SIGTERM stops it and removes its files", func(t *testing.T) {
		cmd.Process.Signal(syscall.SIGTERM)
		testrepo.WaitFor(t, "the server to exit", 3*time.Second, func() bool { return !testrepo.Alive(cmd.Process.Pid) })
		for _, f := range []string{"server.json", "server.pid"} {
			if _, err := os.Stat(filepath.Join(root, ".omni", f)); !os.IsNotExist(err) {
				t.Errorf(".omni/%s left behind: %v", f, err)
			}
		}
		if strings.Contains(stderr.String(), token) {
			t.Error("the token appears in the log")
		}
	})
}

func TestServeRefusesPublicAddressWithoutToken(t *testing.T) {
	root := fixtureRepo(t)
	cmd := exec.Command(binary, "serve", "--http", "0.0.0.0:0")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "OMNIDEV_TOKEN=")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--token") {
		t.Errorf("err %v, output %q; want a refusal that says to pass --token", err, out)
	}
	if _, err := os.Stat(filepath.Join(root, ".omni")); !os.IsNotExist(err) {
		t.Errorf("a refused start created .omni/: %v", err)
	}
}
