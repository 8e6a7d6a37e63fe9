package relay

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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
