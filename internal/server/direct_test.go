package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/omnidev/omnidev/internal/testrepo"
)

// sdkQueryArgs returns what the SDK hands omni_query's handler for raw
// arguments, behind the same input schema, or false when it refuses them.
func sdkQueryArgs(t testing.TB) func(args json.RawMessage) (queryParams, bool) {
	in, err := schemaFor[queryParams](queryTypeSchemas())
	if err != nil {
		t.Fatal(err)
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	got := make(chan queryParams, 1)
	mcp.AddTool(srv, &mcp.Tool{Name: "q", InputSchema: in}, func(_ context.Context, _ *mcp.CallToolRequest, p queryParams) (*mcp.CallToolResult, any, error) {
		got <- p
		return &mcp.CallToolResult{}, nil, nil
	})
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return func(args json.RawMessage) (queryParams, bool) {
		params := &mcp.CallToolParams{Name: "q"}
		if len(args) > 0 {
			params.Arguments = args
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		res, err := cs.CallTool(ctx, params)
		if err != nil || res.IsError {
			if ctx.Err() != nil {
				t.Fatalf("arguments %s: the SDK did not answer", args)
			}
			return queryParams{}, false
		}
		return <-got, true
	}
}

// checkDirectQueryArgs fails when the direct path takes args the SDK
// refuses, or makes of them anything but what the SDK makes.
func checkDirectQueryArgs(t testing.TB, sdk func(json.RawMessage) (queryParams, bool), args json.RawMessage) (direct bool) {
	t.Helper()
	p, ok := directQueryArgs(args)
	if !ok {
		return false
	}
	want, accepted := sdk(args)
	switch {
	case !accepted:
		t.Errorf("arguments %s: the direct path takes them (%+v), the SDK refuses them", args, p)
	case !reflect.DeepEqual(p, want):
		t.Errorf("arguments %s: the direct path makes %#v of them, the SDK %#v", args, p, want)
	}
	return true
}

// TestDirectQueryArgsMatchTheSDK holds the direct path's decoding of
// omni_query's arguments against the SDK's own, behind the same schema:
// typical arguments must take the direct path, and every one it takes
// (hand-picked edge cases, then 3,000 generated objects of right and wrong
// keys and values) must come out as the SDK would hand them to the handler.
func TestDirectQueryArgsMatchTheSDK(t *testing.T) {
	sdk := sdkQueryArgs(t)
	for _, args := range []string{
		``, `{}`, `{"query":"parse config"}`, `{"query":""}`,
		`{"query":"x","limit":1}`, `{"query":"x","limit":100}`, `{"limit":25,"include_types":true}`,
		`{"query":"x","include_types":false,"kinds":[]}`, `{"kinds":["capability","skill","doc","rule","tool"]}`,
		`{"query":"caf\u00e9 \"quoted\" <b>&amp;","kinds":["doc","doc"]}`, `{"query":"ünïcødé"}`, `{"query":"\ud800"}`,
	} {
		if !checkDirectQueryArgs(t, sdk, json.RawMessage(args)) {
			t.Errorf("arguments %s: the SDK answers them, the direct path should", args)
		}
	}
	// The SDK refuses or converts these; the direct path must leave them to it.
	for _, args := range []string{
		`null`, `[]`, `"query"`, `1`, `{"query":null}`, `{"query":1}`, `{"Query":"x"}`, `{"query":"x","extra":1}`,
		`{"limit":0}`, `{"limit":101}`, `{"limit":-1}`, `{"limit":1.0}`, `{"limit":1e1}`, `{"limit":"5"}`, `{"limit":null}`,
		`{"include_types":"true"}`, `{"include_types":null}`, `{"kinds":"doc"}`, `{"kinds":null}`, `{"kinds":["nope"]}`,
		`{"kinds":[1]}`, `{"kinds":[null]}`,
	} {
		if checkDirectQueryArgs(t, sdk, json.RawMessage(args)) {
			t.Errorf("arguments %s: the direct path takes them; they are the SDK's to judge", args)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	values := map[string][]string{
		"query":         {`""`, `"x"`, `"parse config"`, `"\u00e9t\u00e9"`, `"a\"b\\c"`, `"<>&"`, `"\ud83d\ude00"`, `null`, `1`, `true`, `[]`, `{}`},
		"limit":         {`1`, `5`, `10`, `99`, `100`, `0`, `101`, `-5`, `2.0`, `2.5`, `1e2`, `"3"`, `null`, `true`, `007`},
		"include_types": {`true`, `false`, `null`, `0`, `"false"`, `[]`},
		"kinds":         {`[]`, `["doc"]`, `["tool","rule"]`, `["Doc"]`, `["nope"]`, `["doc",1]`, `"doc"`, `null`, `[[]]`, `{}`},
	}
	keys := []string{"query", "limit", "include_types", "kinds", "QUERY", "Limit", "other"}
	direct := 0
	for range 3000 {
		var b strings.Builder
		b.WriteByte('{')
		for i := range r.IntN(5) {
			if i > 0 {
				b.WriteByte(',')
			}
			k := keys[r.IntN(len(keys))]
			vs := values[strings.ToLower(k)]
			if vs == nil {
				vs = values["query"]
			}
			fmt.Fprintf(&b, "%q:%s", k, vs[r.IntN(len(vs))])
		}
		b.WriteByte('}')
		if checkDirectQueryArgs(t, sdk, json.RawMessage(b.String())) {
			direct++
		}
	}
	t.Logf("%d of 3000 generated arguments took the direct path", direct)
	if direct < 300 {
		t.Errorf("only %d of 3000 generated arguments took the direct path", direct)
	}
}

// FuzzDirectQueryArgs is TestDirectQueryArgsMatchTheSDK's check on any
// arguments: go test -fuzz FuzzDirectQueryArgs ./internal/server/
func FuzzDirectQueryArgs(f *testing.F) {
	for _, s := range []string{`{}`, `{"query":"x","limit":3,"include_types":true,"kinds":["doc"]}`, `{"limit":1e1}`, `{"query":"\ud800"}`} {
		f.Add(s)
	}
	sdk := sdkQueryArgs(f)
	f.Fuzz(func(t *testing.T, args string) {
		if !json.Valid([]byte(args)) {
			return // the line filter answers these; they never reach a tool
		}
		checkDirectQueryArgs(t, sdk, json.RawMessage(args))
	})
}

// rawSession is a JSON-RPC client of a server run over stdioTransport
// through pipes: it writes lines and reads the answers by id.
type rawSession struct {
	in      io.WriteCloser
	mu      sync.Mutex
	answers map[string]chan json.RawMessage // id -> the whole answer
}

func startRaw(t *testing.T, srv *mcp.Server, direct ...directTool) (*rawSession, <-chan error) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- srv.Run(context.Background(), stdioTransport(inR, outW, slog.New(slog.DiscardHandler), direct...))
		outW.Close()
	}()
	s := &rawSession{in: inW, answers: map[string]chan json.RawMessage{}}
	go func() {
		lines := bufio.NewScanner(outR)
		lines.Buffer(nil, 16<<20)
		for lines.Scan() {
			var m struct {
				ID json.RawMessage `json:"id"`
			}
			if json.Unmarshal(lines.Bytes(), &m) != nil {
				panic(fmt.Sprintf("not JSON on stdout: %q", lines.Bytes()))
			}
			s.answer(string(m.ID)) <- append(json.RawMessage(nil), lines.Bytes()...)
		}
	}()
	t.Cleanup(func() { inW.Close() })
	return s, done
}

func (s *rawSession) answer(id string) chan json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := s.answers[id]
	if ch == nil {
		ch = make(chan json.RawMessage, 1)
		s.answers[id] = ch
	}
	return ch
}

func (s *rawSession) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

// wait returns the answer to id.
func (s *rawSession) wait(t *testing.T, id int) json.RawMessage {
	t.Helper()
	select {
	case a := <-s.answer(fmt.Sprint(id)):
		return a
	case <-time.After(20 * time.Second):
		t.Fatalf("no answer to request %d", id)
		return nil
	}
}

func (s *rawSession) initialize(t *testing.T) {
	t.Helper()
	s.send(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	s.wait(t, 0)
	s.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// counted counts the calls tool's direct path takes.
func counted(tool directTool, n *atomic.Int64) directTool {
	prepare := tool.prepare
	tool.prepare = func(args json.RawMessage) (func(context.Context) (*mcp.CallToolResult, error), bool) {
		call, ok := prepare(args)
		if ok {
			n.Add(1)
		}
		return call, ok
	}
	return tool
}

// perRequestMeta is the _meta a client on the 2026-07-28 protocol puts in
// each request (what the go-sdk v1.8 client sends).
const perRequestMeta = `"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true}},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"`

// TestDirectCallsAnswerAsTheSDK sends each omni_query call twice over
// stdio, as it is and with a _meta key that leaves it to the SDK, and wants
// the same answer: hits, a summary, types, a tool error, the SDK's refusal
// of arguments the direct path leaves to it. Each call takes the direct
// path, or not, as expected. It does so on a session opened by initialize,
// and on the 2026-07-28 protocol, where each request carries the client's
// protocol version, information and capabilities, and each result the
// server's information and a resultType. Before initialize is answered, a
// call is the SDK's (which refuses it); so is one whose per-request _meta
// the SDK has not accepted yet.
func TestDirectCallsAnswerAsTheSDK(t *testing.T) {
	eng := newTestEngine(t)
	for _, perRequest := range []bool{false, true} {
		t.Run(fmt.Sprintf("per-request=%v", perRequest), func(t *testing.T) {
			srv, err := New(eng, "test", nil)
			if err != nil {
				t.Fatal(err)
			}
			var direct atomic.Int64
			s, _ := startRaw(t, srv, counted(directQuery(eng), &direct))
			meta := "" // the _meta every request carries, inside its braces
			if perRequest {
				meta = perRequestMeta
			}
			withMeta := func(extra string) string { // a _meta member of params, with extra keys
				return `"_meta":{` + strings.Trim(meta+","+extra, ",") + `}`
			}

			first := `{"jsonrpc":"2.0","id":100,"method":"tools/call","params":{"name":"omni_query","arguments":{"query":"x"}}}`
			if perRequest {
				first = `{"jsonrpc":"2.0","id":100,"method":"tools/call","params":{"name":"omni_query","arguments":{"query":"x"},` + withMeta("") + `}}`
			}
			s.send(t, first)
			a := string(s.wait(t, 100))
			switch {
			case !perRequest && !strings.Contains(a, "invalid during session initialization"):
				t.Errorf("a call before initialize: %s, want the SDK's refusal", a)
			case perRequest && (!strings.Contains(a, `"resultType":"complete"`) || !strings.Contains(a, "serverInfo")):
				t.Errorf("a call on the per-request protocol: %s, want the SDK's answer", a)
			}
			if direct.Load() != 0 {
				t.Errorf("the first call took the direct path")
			}
			if !perRequest {
				s.initialize(t)
			}

			calls := []struct {
				args   string // arguments, or "" for none
				extra  string // more _meta keys
				direct bool
			}{
				{args: `{"query":"capability"}`, direct: true},
				{args: `{"query":"hello","limit":2,"include_types":true}`, direct: true},
				{args: `{"query":"","kinds":["capability"]}`, direct: true},
				{args: `{}`, direct: true},
				{direct: true},
				{args: `{"query":"tasks"}`, extra: `"progressToken":7`, direct: true},
				{args: `{"query":"` + strings.Repeat("long ", 400) + `"}`, direct: true}, // over the query's bound: a tool error
				{args: `null`},
				{args: `{"query":"x","limit":1e1}`},
				{args: `{"query":"x","limit":500}`},
			}
			for i, call := range calls {
				params := `"name":"omni_query"`
				if call.args != "" {
					params += `,"arguments":` + call.args
				}
				plain := params
				if meta != "" || call.extra != "" {
					plain += "," + withMeta(call.extra)
				}
				before := direct.Load()
				s.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{%s}}`, 2*i+1, plain))
				gotLine := s.wait(t, 2*i+1)
				if took := direct.Load() > before; took != call.direct {
					t.Errorf("call %d (%.60s): direct path taken: %v, want %v", i, call.args, took, call.direct)
				}
				// A _meta key of no meaning to omnidev, new each time, leaves
				// the call to the SDK.
				sdk := params + "," + withMeta(strings.Trim(call.extra+fmt.Sprintf(`,"omnidev.test/sdk":%d`, i), ","))
				s.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{%s}}`, 2*i+2, sdk))
				wantLine := s.wait(t, 2*i+2)
				var got, want struct {
					Result map[string]any `json:"result"`
					Error  map[string]any `json:"error"`
				}
				json.Unmarshal(gotLine, &got)
				json.Unmarshal(wantLine, &want)
				if (got.Result == nil && got.Error == nil) || !reflect.DeepEqual(got, want) {
					t.Errorf("call %d (%.60s): direct answer\n%.600s\nthe SDK's\n%.600s", i, call.args, gotLine, wantLine)
				}
				if strings.Contains(call.args, "long long") && got.Result["isError"] != true {
					t.Errorf("an over-long query: %.300s, want a tool error", gotLine)
				}
			}
		})
	}
}

// TestDirectCallCancelPanicAndClose drives the direct path with tools of
// its own: a call cancelled by the client is cancelled, and answered; a
// panic is an internal error that leaves the server serving; the end of
// input cancels the calls in flight and waits for them.
func TestDirectCallCancelPanicAndClose(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	var running, ended atomic.Int64
	slow := directTool{name: "slow", prepare: func(json.RawMessage) (func(context.Context) (*mcp.CallToolResult, error), bool) {
		return func(ctx context.Context) (*mcp.CallToolResult, error) {
			running.Add(1)
			defer ended.Add(1)
			<-ctx.Done()
			return nil, ctx.Err()
		}, true
	}}
	boom := directTool{name: "boom", prepare: func(json.RawMessage) (func(context.Context) (*mcp.CallToolResult, error), bool) {
		return func(context.Context) (*mcp.CallToolResult, error) { panic("boom!") }, true
	}}
	s, done := startRaw(t, srv, slow, boom)
	s.initialize(t)

	s.send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}`)
	testrepo.WaitFor(t, "the slow call to start", 10*time.Second, func() bool { return running.Load() == 1 })
	s.send(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)
	if a := string(s.wait(t, 1)); !strings.Contains(a, `"isError":true`) || !strings.Contains(a, "context canceled") {
		t.Errorf("a cancelled call: %s", a)
	}

	s.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"boom","arguments":{}}}`)
	if a := string(s.wait(t, 2)); !strings.Contains(a, `"code":-32603`) || !strings.Contains(a, "internal error in boom: boom!") {
		t.Errorf("a call that panics: %s", a)
	}
	s.send(t, `{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	s.wait(t, 3)

	s.send(t, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"slow"}}`)
	testrepo.WaitFor(t, "the second slow call to start", 10*time.Second, func() bool { return running.Load() == 2 })
	s.in.Close()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the session did not end at the end of input")
	}
	if n := ended.Load(); n != 2 {
		t.Errorf("%d of 2 calls ended when the session had", n)
	}
}
