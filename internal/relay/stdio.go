package relay

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxFrameBytes bounds one JSON-RPC message from a stdio server. It is
// above MaxResultBytes so that a result at the cap still arrives (and one
// over it is refused by our check, with a message, instead of ending the
// session as the SDK does with a frame over its limit).
const maxFrameBytes = 2 * MaxResultBytes

// startStdio starts cmd with its stdin and stdout on pipes that omnidev
// alone holds, and returns the transport over them. (mcp.CommandTransport
// does the same with the SDK's 16 MiB frame limit, which a 16 MiB result
// plus its envelope exceeds.) Closing the transport closes the server's
// stdin, waits terminateGrace for it to exit, then kills its process group.
func startStdio(cmd *exec.Cmd) (mcp.Transport, func(), error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, nil, err
	}
	cmd.Stdin, cmd.Stdout = inR, outW
	// Once the server has exited, its stderr is read for at most
	// terminateGrace more: a process it started in a session of its own
	// escapes killGroup and may hold stderr open for as long as it lives,
	// which would otherwise hold up Wait, and closing the server with it.
	cmd.WaitDelay = terminateGrace
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, nil, err
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	stop := sync.OnceFunc(func() {
		inW.Close()
		select {
		case <-exited:
		case <-time.After(terminateGrace):
			signalGroup(cmd, syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(terminateGrace):
			}
		}
		killGroup(cmd) // what the server started, and the server if it still runs
		<-exited
	})
	return &lineTransport{conn: &lineConn{
		in:    outR,
		r:     bufio.NewReaderSize(outR, 64<<10),
		limit: maxFrameBytes,
		out:   inW,
		stop:  stop,
	}}, stop, nil
}

// errFrameTooLarge ends a session whose server sent a message over its
// limit (maxFrameBytes).
var errFrameTooLarge = errors.New("a message from the MCP server is over the maximum line length")

// lineTransport connects the SDK's client to a stdio server over pipes: one
// JSON-RPC message per line. It is mcp.IOTransport without the goroutine
// and the channel that stand between the pipe and the SDK's reader there:
// a message is read, and decoded once, on the goroutine that handles it,
// one hand-off less for every answer a relayed call waits for.
type lineTransport struct{ conn *lineConn }

func (t *lineTransport) Connect(context.Context) (mcp.Connection, error) { return t.conn, nil }

type lineConn struct {
	in    *os.File // the server's stdout; closing it ends a Read
	r     *bufio.Reader
	limit int               // bytes in one message
	queue []jsonrpc.Message // the rest of a batch

	wmu  sync.Mutex
	out  *os.File // the server's stdin
	stop func()   // closes out and stops the server

	// Tool calls made past the SDK (call), by their ids.
	pmu     sync.Mutex
	pending map[string]chan answer
	nextID  int64
	ended   error // why Read stopped: no answer comes any more
}

// Read returns the next message. It is called from one goroutine at a time
// (the SDK's reader), and Close ends a Read in progress.
func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for len(c.queue) == 0 {
		line, err := readFrame(c.r, c.limit)
		if err != nil {
			c.end(err)
			return nil, err
		}
		line = bytes.TrimSpace(line)
		switch {
		case len(line) == 0:
			continue
		case bytes.Contains(line, []byte(callIDPrefix)) && c.deliver(line):
			continue // an answer to a call past the SDK, or a late one
		case line[0] == '[': // a batch, from a server on an older protocol
			var raws []json.RawMessage
			if err := json.Unmarshal(line, &raws); err != nil {
				return nil, fmt.Errorf("read MCP server message: %w", err)
			}
			for _, raw := range raws {
				msg, err := jsonrpc.DecodeMessage(raw)
				if err != nil {
					return nil, err
				}
				c.queue = append(c.queue, msg)
			}
		default:
			return jsonrpc.DecodeMessage(line)
		}
	}
	msg := c.queue[0]
	c.queue = c.queue[1:]
	return msg, nil
}

func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	return c.writeLine(append(data, '\n'))
}

// callIDPrefix starts the ids of the calls made past the SDK: strings,
// where the SDK's ids are numbers.
const callIDPrefix = "omnidev-call-"

// answer is a server's answer to a call made past the SDK.
type answer struct {
	result json.RawMessage
	err    error // a *jsonrpc.Error, or why no answer came
}

// call makes a tools/call with params (JSON) past the SDK and returns the
// server's result as it sent it. The SDK would decode the result into a
// CallToolResult, which the relay would encode again for the program:
// 0.05 ms of a trivial tool's call (BenchmarkRelay). ctx ending cancels
// the call (notifications/cancelled).
func (c *lineConn) call(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
	ch := make(chan answer, 1)
	c.pmu.Lock()
	if c.ended != nil {
		err := c.ended
		c.pmu.Unlock()
		return nil, err
	}
	c.nextID++
	id := callIDPrefix + strconv.FormatInt(c.nextID, 10)
	if c.pending == nil {
		c.pending = make(map[string]chan answer)
	}
	c.pending[id] = ch
	c.pmu.Unlock()
	req := make([]byte, 0, len(params)+len(id)+64)
	req = append(req, `{"jsonrpc":"2.0","id":"`...)
	req = append(req, id...)
	req = append(req, `","method":"tools/call","params":`...)
	req = append(req, params...)
	req = append(req, "}\n"...)
	if err := c.writeLine(req); err != nil {
		c.forget(id)
		return nil, err
	}
	select {
	case a := <-ch:
		return a.result, a.err
	case <-ctx.Done():
		if c.forget(id) {
			// As the SDK does: the server is told, and its answer ignored.
			note, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled",
				"params": map[string]any{"requestId": id, "reason": context.Cause(ctx).Error()}})
			c.writeLine(append(note, '\n'))
		}
		return nil, ctx.Err()
	}
}

// forget drops a call that is no longer waited for; false if it was
// answered meanwhile.
func (c *lineConn) forget(id string) bool {
	c.pmu.Lock()
	defer c.pmu.Unlock()
	_, ok := c.pending[id]
	delete(c.pending, id)
	return ok
}

// deliver hands line to the call it answers, if it answers one made past
// the SDK; the answer to a call cancelled meanwhile is dropped.
func (c *lineConn) deliver(line []byte) bool {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Result json.RawMessage `json:"result"`
		Error  *jsonrpc.Error  `json:"error"`
	}
	var id string
	if json.Unmarshal(line, &m) != nil || m.Method != "" || json.Unmarshal(m.ID, &id) != nil || !strings.HasPrefix(id, callIDPrefix) {
		return false
	}
	c.pmu.Lock()
	ch := c.pending[id]
	delete(c.pending, id)
	c.pmu.Unlock()
	switch {
	case ch == nil: // cancelled meanwhile
	case m.Error != nil:
		ch <- answer{err: m.Error}
	case m.Result == nil:
		ch <- answer{err: errors.New("the MCP server answered with neither a result nor an error")}
	default:
		ch <- answer{result: m.Result}
	}
	return true
}

// end fails the calls in flight past the SDK: no answer comes after err.
func (c *lineConn) end(err error) {
	if errors.Is(err, io.EOF) || errors.Is(err, os.ErrClosed) {
		err = mcp.ErrConnectionClosed
	}
	c.pmu.Lock()
	defer c.pmu.Unlock()
	if c.ended == nil {
		c.ended = err
	}
	for id, ch := range c.pending {
		ch <- answer{err: err}
		delete(c.pending, id)
	}
}

func (c *lineConn) writeLine(line []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.out.Write(line)
	return err
}

// Close closes the server's stdout, which ends a Read in progress, and
// stops the server (see startStdio).
func (c *lineConn) Close() error {
	c.in.Close()
	c.stop()
	c.end(mcp.ErrConnectionClosed)
	return nil
}

func (c *lineConn) SessionID() string { return "" }

// readFrame reads one line of at most limit bytes.
func readFrame(br *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > limit {
			return nil, errFrameTooLarge
		}
		if err == bufio.ErrBufferFull {
			line = append(line, chunk...)
			continue
		}
		if line == nil && err == nil {
			return chunk, nil // valid until the next read; decoded before it
		}
		return append(line, chunk...), err
	}
}
