package server_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/omnidev/omnidev/internal/testrepo"
)

// rawServer is `omnidev serve` spoken to line by line, with no MCP client.
type rawServer struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
}

func startRawServer(t *testing.T, root string) *rawServer {
	t.Helper()
	s := &rawServer{cmd: exec.Command(binary, "serve"), lines: make(chan string, 64)}
	s.cmd.Dir = root
	stderr := new(testrepo.Buffer)
	s.cmd.Stderr = stderr
	var err error
	if s.stdin, err = s.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(s.lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server stderr:\n%s", stderr)
		}
		s.stdin.Close()
		done := make(chan struct{})
		go func() { s.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			s.cmd.Process.Kill()
			<-done
		}
	})
	return s
}

func (s *rawServer) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(s.stdin, line+"\n"); err != nil {
		t.Fatalf("write to the server: %v", err)
	}
}

// next returns the next line the server writes; a server that hangs or
// exits fails the test.
func (s *rawServer) next(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	select {
	case line, ok := <-s.lines:
		if !ok {
			t.Fatal("the server closed stdout (it ended)")
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("the server wrote a line that is not JSON (%v): %q", err, line)
		}
		return m
	case <-time.After(20 * time.Second):
		t.Fatal("no reply from the server within 20 s")
	}
	return nil
}

// hugeLine stands for a line sendHuge writes.
const hugeLine = "(huge)"

// sendHuge writes a tools/call line of size bytes, a megabyte at a time.
func (s *rawServer) sendHuge(t *testing.T, size int) {
	t.Helper()
	head := `{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"omni_execute","arguments":{"code":"`
	tail := "\"}}}\n"
	chunk := strings.Repeat("x", 1<<20)
	io.WriteString(s.stdin, head)
	for n := len(head) + len(tail); n < size; n += len(chunk) {
		if _, err := io.WriteString(s.stdin, chunk); err != nil {
			t.Fatalf("write to the server: %v", err)
		}
	}
	io.WriteString(s.stdin, tail)
}

// ping sends a ping with id and checks that its result is the next line.
func (s *rawServer) ping(t *testing.T, id int) {
	t.Helper()
	s.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, id))
	m := s.next(t)
	if string(m["id"]) != strconv.Itoa(id) || m["result"] == nil {
		t.Fatalf("reply to ping %d: %v", id, m)
	}
}

// TestStdioMalformedLines sends each kind of bad line to the real binary,
// each followed by a valid request: the bad line gets the JSON-RPC error it
// deserves (or, for what JSON-RPC never answers, nothing), and the server
// answers the request after it. An error for a line whose id cannot be read
// carries no id, as the SDK encodes it (MCP's ids are never null).
func TestStdioMalformedLines(t *testing.T) {
	root := fixtureRepo(t)
	s := startRawServer(t, root)

	// Before the handshake too.
	s.send(t, "GET / HTTP/1.1")
	if m := s.next(t); !strings.Contains(string(m["error"]), "-32700") || m["id"] != nil {
		t.Fatalf("reply to a first line that is not JSON: %v", m)
	}
	s.send(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if m := s.next(t); string(m["id"]) != "0" || m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	s.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	tests := []struct {
		name string
		line string
		code int    // 0: no reply expected
		id   string // the id the error carries; "" for none
	}{
		{"not JSON", "hello there", -32700, ""},
		{"truncated object", `{"jsonrpc":"2.0","id":7,"method":"tools/list"`, -32700, ""},
		{"batch", `[{"jsonrpc":"2.0","id":8,"method":"ping"}]`, -32600, ""},
		{"empty batch", `[]`, -32600, ""},
		{"not an object", `"ping"`, -32600, ""},
		{"missing jsonrpc", `{"id":9,"method":"ping"}`, -32600, "9"},
		{"wrong jsonrpc", `{"jsonrpc":"1.0","id":"ten","method":"ping"}`, -32600, `"ten"`},
		{"id of a wrong type", `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, -32600, ""},
		{"malformed notification", `{"jsonrpc":"2.0","method":12}`, -32600, ""},
		{"notification without jsonrpc", `{"method":"notifications/initialized"}`, -32600, ""},
		{"line of 200 MiB", hugeLine, -32600, ""},
		// JSON-RPC answers neither a notification, even of an unknown
		// method, nor a response.
		{"unknown notification", `{"jsonrpc":"2.0","method":"notifications/nonsense"}`, 0, ""},
		{"stray response", `{"jsonrpc":"2.0","id":"nobody-asked","result":{}}`, 0, ""},
		{"broken response", `{"id":3,"error":{"code":1,"message":"x"}}`, 0, ""},
		{"blank line", "", 0, ""},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			peakBefore := peakRSS(t, s.cmd.Process.Pid)
			if tt.line == hugeLine {
				s.sendHuge(t, 200<<20)
			} else {
				s.send(t, tt.line)
			}
			if tt.code != 0 {
				m := s.next(t)
				var e struct {
					Code    int
					Message string
				}
				json.Unmarshal(m["error"], &e)
				if e.Code != tt.code || string(m["id"]) != tt.id || string(m["jsonrpc"]) != `"2.0"` {
					t.Errorf("reply %v; want error %d with id %s", m, tt.code, tt.id)
				}
				if e.Message == "" {
					t.Error("the error has no message")
				}
			}
			s.ping(t, 100+i)
			// A skipped line is never held whole: past the bound, the rest
			// is read and dropped.
			if tt.line == hugeLine {
				grown := peakRSS(t, s.cmd.Process.Pid) - peakBefore
				t.Logf("peak memory grew by %d MiB for a line of 200 MiB", grown>>20)
				if grown > 100<<20 {
					t.Errorf("peak memory grew by %d MiB for a line of 200 MiB", grown>>20)
				}
			}
		})
	}

	// A real call still works after all of them.
	s.send(t, `{"jsonrpc":"2.0","id":500,"method":"tools/call","params":{"name":"omni_query","arguments":{"query":"tasks"}}}`)
	if m := s.next(t); string(m["id"]) != "500" || !strings.Contains(string(m["result"]), "capability:tasks") {
		t.Errorf("omni_query after the bad lines: %v", m)
	}
}

// peakRSS returns a process's peak resident set size (VmHWM) in bytes.
func peakRSS(t *testing.T, pid int) int {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`VmHWM:\s+(\d+) kB`).FindSubmatch(data)
	if m == nil {
		t.Fatalf("no VmHWM in /proc/%d/status", pid)
	}
	kb, _ := strconv.Atoi(string(m[1]))
	return kb << 10
}
