package relay

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
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
			return nil, err
		}
		line = bytes.TrimSpace(line)
		switch {
		case len(line) == 0:
			continue
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
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err = c.out.Write(append(data, '\n'))
	return err
}

// Close closes the server's stdout, which ends a Read in progress, and
// stops the server (see startStdio).
func (c *lineConn) Close() error {
	c.in.Close()
	c.stop()
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
