package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// filterLines reads input through a lineFilter of max bytes a line and
// returns what it passed and what it answered.
func filterLines(t testing.TB, input string, max int) (passed, answered string) {
	t.Helper()
	var out bytes.Buffer
	in := io.NopCloser(strings.NewReader(input))
	f := &lineFilter{in: bufio.NewReaderSize(in, 16<<10), closer: in, out: &out, max: max, logger: slog.New(slog.DiscardHandler)}
	data, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return string(data), out.String()
}

// errorReply is the shape of the filter's answers.
type errorReply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func TestLineFilter(t *testing.T) {
	const ping = `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	tests := []struct {
		name string
		line string
		pass string // what the SDK reads; "" for nothing
		// the answer, if any: its code, id ("" for none) and a part of its
		// message
		code    int64
		id      string
		message string
	}{
		{name: "request", line: ping, pass: ping},
		{name: "CRLF and spaces", line: "  " + ping + " \r", pass: ping},
		{name: "notification", line: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, pass: `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		{name: "response", line: `{"jsonrpc":"2.0","id":"x","result":{}}`, pass: `{"jsonrpc":"2.0","id":"x","result":{}}`},
		{name: "blank line", line: "   \r"},
		{name: "not JSON", line: "hello", code: -32700, message: "Parse error: invalid character"},
		{name: "truncated object", line: `{"jsonrpc":"2.0","id":7,"method":"ping"`, code: -32700, message: "unexpected end of JSON input"},
		{name: "two values on a line", line: ping + ping, code: -32700, message: "after top-level value"},
		{name: "batch", line: "[" + ping + "]", code: -32600, message: "batches are not supported"},
		{name: "empty batch", line: "[]", code: -32600, message: "batches are not supported"},
		{name: "number", line: "42", code: -32600, message: "must be a JSON object"},
		{name: "null", line: "null", code: -32600, message: "must be a JSON object"},
		{name: "no jsonrpc member", line: `{"id":9,"method":"ping"}`, code: -32600, id: "9", message: `expected "2.0"`},
		{name: "wrong version", line: `{"jsonrpc":"1.0","id":"abc","method":"ping"}`, code: -32600, id: `"abc"`, message: `"1.0"`},
		{name: "version of the wrong case", line: `{"JSONRPC":"2.0","id":-3,"method":"ping"}`, code: -32600, id: "-3", message: `expected "2.0"`},
		{name: "id of a wrong type", line: `{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}`, code: -32600, message: "invalid ID type"},
		{name: "method of a wrong type, no id", line: `{"jsonrpc":"2.0","method":1}`, code: -32600, message: "Invalid Request"},
		{name: "neither request nor response", line: `{"jsonrpc":"2.0"}`, code: -32600, message: "invalid request"},
		// JSON-RPC never answers a response, even a broken one.
		{name: "broken response", line: `{"id":5,"result":{}}`},
		{name: "broken error response", line: `{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"x"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The valid request after the line shows that reading goes on.
			passed, out := filterLines(t, tt.line+"\n"+ping+"\n", 1<<10)
			want := ping + "\n"
			if tt.pass != "" {
				want = tt.pass + "\n" + want
			}
			if string(passed) != want {
				t.Errorf("passed %q, want %q", passed, want)
			}
			if tt.code == 0 {
				if out != "" {
					t.Errorf("answered %q, want no answer", out)
				}
				return
			}
			var r errorReply
			if err := json.Unmarshal([]byte(out), &r); err != nil || !strings.HasSuffix(out, "}\n") || strings.Count(out, "\n") != 1 {
				t.Fatalf("answer %q is not one JSON line: %v", out, err)
			}
			if r.JSONRPC != "2.0" || r.Error.Code != tt.code || string(r.ID) != tt.id || !strings.Contains(r.Error.Message, tt.message) {
				t.Errorf("answer %s; want code %d, id %q, message containing %q", out, tt.code, tt.id, tt.message)
			}
		})
	}
}

// TestLineFilterLongLines checks the size bound: a line at the bound
// passes, one past it is answered and skipped, and a line without a final
// newline is still read.
func TestLineFilterLongLines(t *testing.T) {
	const max = 1 << 20
	msg := func(size int) string {
		head := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"`
		tail := `"}}`
		return head + strings.Repeat("x", size-len(head)-len(tail)) + tail
	}
	ping := `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	for _, tt := range []struct {
		name     string
		input    string
		want     string
		answered bool
	}{
		{"at the bound", msg(max) + "\n" + ping + "\n", msg(max) + "\n" + ping + "\n", false},
		{"at the bound with CRLF", msg(max) + "\r\n" + ping + "\n", msg(max) + "\n" + ping + "\n", false},
		{"one byte over", msg(max+1) + "\n" + ping + "\n", ping + "\n", true},
		{"over, counting the line end", msg(max+2) + "\n" + ping + "\n", ping + "\n", true},
		{"twenty times over", msg(20*max) + "\n" + ping + "\n", ping + "\n", true},
		{"no final newline", ping, ping + "\n", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			passed, out := filterLines(t, tt.input, max)
			if passed != tt.want {
				t.Errorf("passed %d bytes, want %d", len(passed), len(tt.want))
			}
			if answered := strings.Contains(out, "was skipped"); answered != tt.answered {
				t.Errorf("answered %q, want an answer: %v", out, tt.answered)
			}
		})
	}
}

// TestSDKStdioNeedsFilter documents why the filter exists: behind the SDK's
// own transport, one bad line ends the session with no reply. When this
// test fails, the SDK resynchronizes by itself and the filter can go.
func TestSDKStdioNeedsFilter(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- srv.Run(t.Context(), &mcp.IOTransport{Reader: inR, Writer: outW}) }()
	go io.Copy(io.Discard, outR)
	io.WriteString(inW, "not json\n")
	select {
	case err := <-done:
		t.Logf("the SDK ended the session: %v", err)
	case <-time.After(10 * time.Second):
		t.Error("the SDK's transport survived a line that is not JSON: the line filter may no longer be needed")
	}
	inW.Close()
	outW.Close()
}

// TestStdioRepliesDoNotInterleave runs the SDK behind the filter with bad
// lines and requests sent at once, so that the filter's answers and the
// SDK's race for stdout: every line out must be one whole JSON message, and
// every line in answered.
func TestStdioRepliesDoNotInterleave(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go srv.Run(ctx, stdioTransport(inR, outW, slog.New(slog.DiscardHandler)))
	const n = 200
	go func() {
		io.WriteString(inW, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n")
		io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
		for i := 1; i <= n; i++ {
			fmt.Fprintf(inW, "garbage %s\n", strings.Repeat("x", i*50))
			fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`+"\n", i)
		}
	}()
	lines := bufio.NewScanner(outR)
	lines.Buffer(nil, 1<<20)
	errs, results := 0, 0
	for errs < n || results < n+1 {
		if !lines.Scan() {
			t.Fatalf("after %d errors and %d results: %v", errs, results, lines.Err())
		}
		var m struct {
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(lines.Bytes(), &m); err != nil {
			t.Fatalf("a line out is not one JSON message (%v): %q", err, lines.Bytes())
		}
		switch {
		case m.Error != nil:
			errs++
		case m.Result != nil:
			results++
		}
	}
	inW.Close()
}

// BenchmarkLineFilter measures what the filter costs per message on stdin,
// for a typical tools/call and for one carrying a program of 1 MiB (the
// largest omni_execute accepts), beside the reference of the SDK decoding
// the same message once (it decodes each message at least that much itself).
func BenchmarkLineFilter(b *testing.B) {
	for _, size := range []int{200, 1 << 20} {
		head := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"omni_execute","arguments":{"code":"`
		tail := `"}}}`
		line := []byte(head + strings.Repeat("x", max(size-len(head)-len(tail), 0)) + tail + "\n")
		b.Run(fmt.Sprintf("filter/%d bytes", len(line)), func(b *testing.B) {
			in := bytes.NewReader(line)
			f := &lineFilter{in: bufio.NewReaderSize(in, 64<<10), out: io.Discard, max: maxLineBytes, logger: slog.New(slog.DiscardHandler)}
			b.SetBytes(int64(len(line)))
			for b.Loop() {
				in.Reset(line)
				f.in.Reset(in)
				f.err = nil
				if n, err := io.Copy(io.Discard, f); err != nil || n != int64(len(line)) {
					b.Fatalf("passed %d bytes: %v", n, err)
				}
			}
		})
		b.Run(fmt.Sprintf("sdk decode/%d bytes", len(line)), func(b *testing.B) {
			b.SetBytes(int64(len(line)))
			for b.Loop() {
				if _, err := jsonrpc.DecodeMessage(line); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
