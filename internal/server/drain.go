package server

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// drainTransport wraps a stdio transport so that a stop can answer the
// calls in flight before the session closes. The SDK's ServerSession.Close
// refuses to write any response once it has begun (jsonrpc2's
// shuttingDown), and mcp.Server.Run cancels the handlers at once: either
// way the client of a run in flight never gets its result. The wrapper
// counts the calls read and the responses written, which no middleware can
// see (a handler returns before its response is written).
type drainTransport struct {
	inner mcp.Transport
	mu    sync.Mutex
	calls map[any]bool // ids of the calls read and not answered yet
	// stopping: calls read from now on are refused; idle is closed once
	// every call in flight has been answered.
	stopping bool
	idle     chan struct{}
	// reads ends with endReads: reading ends, and with it every request
	// still in flight.
	reads     context.Context
	stopReads context.CancelFunc
}

func newDrainTransport(t mcp.Transport) *drainTransport {
	reads, stop := context.WithCancel(context.Background())
	return &drainTransport{inner: t, calls: map[any]bool{}, idle: make(chan struct{}), reads: reads, stopReads: stop}
}

// endReads makes the connection's reads fail, once the calls in flight
// are answered: the SDK then cancels the requests still open, as when a
// client goes away. A long-lived request (a client's subscriptions/listen,
// SEP-2575) ends only that way: ServerSession.Close waits for every
// request in flight, and cancels none.
func (d *drainTransport) endReads() { d.stopReads() }

func (d *drainTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := d.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &drainConn{Connection: c, d: d}, nil
}

// stop refuses new calls from now on; the channel it returns is closed once
// the calls in flight have been answered.
func (d *drainTransport) stop() <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.stopping {
		d.stopping = true
		d.idleIfDone()
	}
	return d.idle
}

func (d *drainTransport) idleIfDone() {
	if d.stopping && len(d.calls) == 0 {
		select {
		case <-d.idle:
		default:
			close(d.idle)
		}
	}
}

type drainConn struct {
	mcp.Connection
	d *drainTransport
}

func (c *drainConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(c.d.reads, cancel)()
	for {
		msg, err := c.Connection.Read(ctx)
		req, ok := msg.(*jsonrpc.Request)
		// A subscriptions/listen stream is answered only when reading ends
		// (endReads): not a call to wait for.
		if err != nil || !ok || !req.ID.IsValid() || req.Method == "subscriptions/listen" {
			return msg, err
		}
		c.d.mu.Lock()
		stopping := c.d.stopping
		if !stopping {
			c.d.calls[req.ID.Raw()] = true
		}
		c.d.mu.Unlock()
		if !stopping {
			return msg, nil
		}
		refusal := &jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "omnidev is stopping: start it again (an MCP host restarts it) and retry"}}
		if err := c.Connection.Write(ctx, refusal); err != nil {
			return nil, err
		}
	}
}

func (c *drainConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.Connection.Write(ctx, msg)
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.d.mu.Lock()
		delete(c.d.calls, resp.ID.Raw())
		c.d.idleIfDone()
		c.d.mu.Unlock()
	}
	return err
}
