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

// TestDirectCallsAnswerAsTheSDK sends each omni_query call twice over
// stdio, as it is and with a _meta key that leaves it to the SDK, and wants
// the same answer: hits, a summary, types, a tool error, the SDK's refusal
// of arguments the direct path leaves to it. Each call takes the direct
// path, or not, as expected. Before initialize is answered, a call is the
// SDK's (which refuses it).
func TestDirectCallsAnswerAsTheSDK(t *testing.T) {
	eng := newTestEngine(t)
	srv, err := New(eng, "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	var direct atomic.Int64
	s, _ := startRaw(t, srv, counted(directQuery(eng), &direct))

	s.send(t, `{"jsonrpc":"2.0","id":100,"method":"tools/call","params":{"name":"omni_query","arguments":{"query":"x"}}}`)
	if a := string(s.wait(t, 100)); !strings.Contains(a, "invalid during session initialization") {
		t.Errorf("a call before initialize: %s, want the SDK's refusal", a)
	}
	s.initialize(t)

	calls := []struct {
		params string // after the name
		direct bool
	}{
		{`"arguments":{"query":"capability"}`, true},
		{`"arguments":{"query":"hello","limit":2,"include_types":true}`, true},
		{`"arguments":{"query":"","kinds":["capability"]}`, true},
		{`"arguments":{}`, true},
		{``, true},
		{`"arguments":{"query":"tasks"},"_meta":{"progressToken":7}`, true},
		{`"arguments":{"query":"` + strings.Repeat("long ", 400) + `"}`, true}, // over the query's bound: a tool error
		{`"arguments":null`, false},
		{`"arguments":{"query":"x","limit":1e1}`, false},
		{`"arguments":{"query":"x","limit":500}`, false},
	}
	for i, call := range calls {
		args := call.params
		if args != "" {
			args = "," + args
		}
		before := direct.Load()
		s.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"omni_query"%s}}`, 2*i+1, args))
		gotLine := s.wait(t, 2*i+1)
		if took := direct.Load() > before; took != call.direct {
			t.Errorf("call %d (%.60s): direct path taken: %v, want %v", i, call.params, took, call.direct)
		}
		// A _meta key of no meaning to omnidev leaves the call to the SDK.
		sdkArgs := strings.Replace(args, `,"_meta":{`, `,"_meta":{"omnidev.test/sdk":true,`, 1)
		if sdkArgs == args {
			sdkArgs = `,"_meta":{"omnidev.test/sdk":true}` + args
		}
		s.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"omni_query"%s}}`, 2*i+2, sdkArgs))
		wantLine := s.wait(t, 2*i+2)
		var got, want struct {
			Result map[string]any `json:"result"`
			Error  map[string]any `json:"error"`
		}
		json.Unmarshal(gotLine, &got)
		json.Unmarshal(wantLine, &want)
		if (got.Result == nil && got.Error == nil) || !reflect.DeepEqual(got, want) {
			t.Errorf("call %d (%.60s): direct answer\n%.600s\nthe SDK's\n%.600s", i, call.params, gotLine, wantLine)
		}
		if strings.Contains(call.params, "long long") && got.Result["isError"] != true {
			t.Errorf("an over-long query: %.300s, want a tool error", gotLine)
		}
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
