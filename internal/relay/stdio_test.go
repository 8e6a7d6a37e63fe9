package relay

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// pipeConn returns a lineConn reading what the test writes to w, whose
// messages written go to the returned reader.
func pipeConn(t *testing.T) (c *lineConn, w *os.File, sent *bufio.Reader) {
	t.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	c = &lineConn{in: inR, r: bufio.NewReaderSize(inR, 16), limit: 1000, out: outW, stop: func() { outW.Close() }}
	t.Cleanup(func() { c.Close(); inW.Close(); outR.Close() })
	return c, inW, bufio.NewReader(outR)
}

func TestLineConnRead(t *testing.T) {
	c, w, _ := pipeConn(t)
	// Blank lines are skipped, a batch is read one message at a time, and
	// a line longer than the reader's buffer arrives whole.
	long := strings.Repeat("x", 100)
	input := "\n" +
		`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n\r\n" +
		`[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","id":2,"result":{"s":"` + long + `"}}]` + "\n" +
		`{"jsonrpc":"2.0","method":"b"}` + "\n"
	go w.WriteString(input)
	var got []string
	for range 4 {
		msg, err := c.Read(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		switch m := msg.(type) {
		case *jsonrpc.Request:
			got = append(got, m.Method)
		case *jsonrpc.Response:
			got = append(got, fmt.Sprint(m.ID.Raw())+":"+string(m.Result))
		}
	}
	want := []string{"1:{}", "a", `2:{"s":"` + long + `"}`, "b"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("read %q, want %q", got, want)
	}
}

func TestLineConnFrameLimit(t *testing.T) {
	c, w, _ := pipeConn(t)
	go w.WriteString(`{"jsonrpc":"2.0","id":1,"result":{"s":"` + strings.Repeat("x", 1000) + `"}}` + "\n")
	if _, err := c.Read(t.Context()); !errors.Is(err, errFrameTooLarge) {
		t.Fatalf("read a frame over the limit: %v, want errFrameTooLarge", err)
	}
}

func TestLineConnWrite(t *testing.T) {
	c, _, sent := pipeConn(t)
	req, err := jsonrpc.MakeID(float64(7))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Write(t.Context(), &jsonrpc.Request{ID: req, Method: "tools/list"}); err != nil {
		t.Fatal(err)
	}
	line, err := sent.ReadString('\n')
	if err != nil || !strings.Contains(line, `"method":"tools/list"`) || strings.Count(line, "\n") != 1 {
		t.Fatalf("wrote %q, %v: want one line", line, err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := c.Write(ctx, &jsonrpc.Request{ID: req, Method: "x"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("write on a cancelled context: %v", err)
	}
}

func TestLineConnCloseEndsRead(t *testing.T) {
	c, _, _ := pipeConn(t)
	done := make(chan error, 1)
	go func() {
		_, err := c.Read(context.Background())
		done <- err
	}()
	time.Sleep(20 * time.Millisecond) // let Read block
	c.Close()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("Read returned no error after Close")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end a Read in progress")
	}
}

// readLoop runs the SDK's side of c: it reads messages until c ends, and
// returns those the SDK would get.
func readLoop(c *lineConn) <-chan []string {
	out := make(chan []string, 1)
	go func() {
		var got []string
		for {
			msg, err := c.Read(context.Background())
			if err != nil {
				out <- got
				return
			}
			switch m := msg.(type) {
			case *jsonrpc.Request:
				got = append(got, m.Method)
			case *jsonrpc.Response:
				got = append(got, fmt.Sprint(m.ID.Raw()))
			}
		}
	}()
	return out
}

// TestLineConnCall makes tool calls past the SDK against a server the test
// plays: the request goes out with a string id; the answer comes back as
// the server wrote it, while the SDK's own messages around it still reach
// the SDK; an error answer is a *jsonrpc.Error; a cancelled call tells the
// server and ignores its late answer; and the end of the server's output
// fails the call in flight and any call after it.
func TestLineConnCall(t *testing.T) {
	c, w, sent := pipeConn(t)
	c.limit = 1 << 20
	sdk := readLoop(c)
	type result struct {
		data string
		err  error
	}
	call := func(ctx context.Context, params string) <-chan result {
		ch := make(chan result, 1)
		go func() {
			data, err := c.call(ctx, []byte(params))
			ch <- result{string(data), err}
		}()
		return ch
	}
	request := func() (id string) {
		t.Helper()
		line, err := sent.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			ID     string          `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil || m.Method != "tools/call" || string(m.Params) != `{"name":"echo"}` {
			t.Fatalf("sent %q (%v): want a tools/call with the params given", line, err)
		}
		return m.ID
	}

	res := call(t.Context(), `{"name":"echo"}`)
	id := request()
	// The answer's own layout and fields are kept: the program gets what
	// the server sent, not what the SDK makes of it.
	answer := `{ "content" : [{"type":"future","x":1}], "extra": true }`
	fmt.Fprintf(w, `{"jsonrpc":"2.0","method":"notifications/message","params":{}}`+"\n"+
		`{"jsonrpc":"2.0","id":7,"result":{"note":"%s"}}`+"\n"+
		`{"result":%s,"jsonrpc":"2.0","id":%q}`+"\n", id, answer, id)
	if r := <-res; r.err != nil || r.data != answer {
		t.Fatalf("call: %q, %v; want %q", r.data, r.err, answer)
	}

	res = call(t.Context(), `{"name":"echo"}`)
	id = request()
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%q,"error":{"code":-32602,"message":"unknown tool"}}`+"\n", id)
	var werr *jsonrpc.Error
	if r := <-res; !errors.As(r.err, &werr) || werr.Code != -32602 || werr.Message != "unknown tool" {
		t.Fatalf("an error answer: %v", r.err)
	}

	ctx, cancel := context.WithCancel(t.Context())
	res = call(ctx, `{"name":"echo"}`)
	id = request()
	cancel()
	if r := <-res; !errors.Is(r.err, context.Canceled) {
		t.Fatalf("a cancelled call: %v", r.err)
	}
	if line, _ := sent.ReadString('\n'); !strings.Contains(line, `"notifications/cancelled"`) || !strings.Contains(line, `"requestId":"`+id+`"`) {
		t.Fatalf("after the cancel, sent %q: want notifications/cancelled for %s", line, id)
	}
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%q,"result":{"late":true}}`+"\n", id)

	res = call(t.Context(), `{"name":"echo"}`)
	request()
	w.Close()
	if r := <-res; !errors.Is(r.err, mcp.ErrConnectionClosed) {
		t.Fatalf("a call when the server's output ended: %v", r.err)
	}
	if _, err := c.call(t.Context(), []byte(`{"name":"echo"}`)); !errors.Is(err, mcp.ErrConnectionClosed) {
		t.Fatalf("a call after the server's output ended: %v", err)
	}
	// The SDK got its own messages, and none of the answers to the calls
	// past it (the late one included).
	if got := strings.Join(<-sdk, " "); got != "notifications/message 7" {
		t.Errorf("the SDK read %q", got)
	}
}
