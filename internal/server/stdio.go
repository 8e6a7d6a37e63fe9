package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxLineBytes bounds one message on stdin, as the SDK's own default does.
// A program sent to omni_execute is at most 1 MiB; anything near the bound
// is a mistake, answered and skipped.
const maxLineBytes = 16 << 20

// stdioReadBuffer is how much of stdin is read at a time; lines longer than
// this are gathered chunk by chunk, up to maxLineBytes.
const stdioReadBuffer = 64 << 10

// stdioTransport is MCP's stdio transport over in and out: one JSON-RPC
// message per line, each line read and decoded once, behind a filter that
// hands the SDK only well-formed messages, with the plain calls of the
// direct tools answered beside it (direct.go).
//
// The SDK's own transport (mcp.IOTransport) reads its input with one
// streaming JSON decoder that cannot resynchronize: a line that is not
// JSON, a batch, a message it refuses or an oversized frame ends the
// session with no reply, and a truncated object leaves it waiting for the
// rest. The filter frames input by lines (MCP's stdio framing: one message
// per line, no embedded newlines), answers each bad line with the JSON-RPC
// error it deserves and goes on to the next. Only messages the SDK's own
// decoder accepts pass, decoded by it once; the SDK is left to answer
// everything else (unknown methods, bad params) itself. The SDK's
// transport would then scan each line again and decode it a second time.
func stdioTransport(in io.Reader, out io.Writer, logger *slog.Logger, direct ...directTool) mcp.Transport {
	w := &syncWriter{w: out}
	tools := make(map[string]directTool, len(direct))
	for _, t := range direct {
		tools[t.name] = t
	}
	return &lineTransport{filter: newLineFilter(in, w, maxLineBytes, logger), out: w, tools: tools, logger: logger}
}

type lineTransport struct {
	filter *lineFilter
	out    *syncWriter
	tools  map[string]directTool
	logger *slog.Logger
}

func (t *lineTransport) Connect(context.Context) (mcp.Connection, error) {
	c := &stdioConn{
		filter:   t.filter,
		out:      t.out,
		incoming: make(chan incoming),
		closed:   make(chan struct{}),
		direct:   &directCalls{tools: t.tools, logger: t.logger},
	}
	go c.readLoop()
	return c, nil
}

// stdioConn is the connection of stdioTransport. Its input is read on a
// goroutine of its own, as in the SDK's transport, so that Close ends a
// Read at once: a read of stdin cannot be interrupted (that goroutine ends
// with the input, or with the process).
//
// It writes a successful response around its result as the SDK encoded it:
// encoding the whole response again, as the SDK's transport does, would
// re-validate the result's bytes, a pass over the whole result.
type stdioConn struct {
	filter    *lineFilter
	out       *syncWriter
	incoming  chan incoming
	closed    chan struct{}
	closeOnce sync.Once
	direct    *directCalls
}

type incoming struct {
	msg jsonrpc.Message
	err error
}

func (c *stdioConn) readLoop() {
	for {
		msg, err := c.filter.nextMessage()
		select {
		case c.incoming <- incoming{msg, err}:
		case <-c.closed:
			return
		}
		if err != nil {
			return
		}
	}
}

// Read returns the next message for the SDK, answering the plain calls of
// direct tools on the way.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		var msg jsonrpc.Message
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case in := <-c.incoming:
			if in.err != nil {
				return nil, in.err
			}
			msg = in.msg
		case <-c.closed:
			return nil, io.EOF
		}
		if req, ok := msg.(*jsonrpc.Request); !ok || !c.direct.seen(req, c) {
			return msg, nil
		}
	}
}

func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	resp, ok := msg.(*jsonrpc.Response)
	if ok {
		// Before the answer goes out: the client's next call may follow it
		// at once.
		c.direct.answered(resp)
	}
	// A result with a newline in it (the SDK's are compact) is encoded
	// whole, which compacts it: a message is one line.
	if ok && resp.Error == nil && len(resp.Result) > 0 && resp.ID.IsValid() && bytes.IndexByte(resp.Result, '\n') < 0 {
		return c.writeResult(resp.ID, resp.Result)
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	_, err = c.out.Write(append(data, '\n'))
	return err
}

// writeResult writes a successful response of result, which must be one
// line of JSON.
func (c *stdioConn) writeResult(id jsonrpc.ID, result []byte) error {
	idJSON, err := json.Marshal(id.Raw())
	if err != nil {
		return err
	}
	line := make([]byte, 0, len(result)+len(idJSON)+40)
	line = append(line, `{"jsonrpc":"2.0","id":`...)
	line = append(line, idJSON...)
	line = append(line, `,"result":`...)
	line = append(line, result...)
	line = append(line, "}\n"...)
	_, err = c.out.Write(line)
	return err
}

// Close ends the direct calls in flight and a Read in progress, and closes
// the input, as the SDK's transport does.
func (c *stdioConn) Close() error {
	var err error
	c.closeOnce.Do(func() {
		c.direct.close()
		close(c.closed)
		err = c.filter.Close()
	})
	return err
}

func (c *stdioConn) SessionID() string { return "" }

// syncWriter serializes writes to stdout. The SDK writes each message with
// one Write and the filter each reply with one: holding the lock for the
// whole Write keeps every line whole.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// Close does nothing: stdout outlives the session.
func (s *syncWriter) Close() error { return nil }

// lineFilter reads lines from in and yields the JSON-RPC messages among
// them, decoded; it answers the others on out. It is read by one
// goroutine, stdioConn's.
type lineFilter struct {
	in     *bufio.Reader
	closer io.Closer // in, if it can be closed
	out    io.Writer
	max    int
	logger *slog.Logger
	line   []byte // the line being gathered
	err    error  // what ended the input, returned after the last message
	closed atomic.Bool
}

func newLineFilter(in io.Reader, out io.Writer, max int, logger *slog.Logger) *lineFilter {
	f := &lineFilter{in: bufio.NewReaderSize(in, stdioReadBuffer), out: out, max: max, logger: logger}
	f.closer, _ = in.(io.Closer)
	return f
}

// nextMessage returns the next message that passes, as the SDK decodes it.
func (f *lineFilter) nextMessage() (jsonrpc.Message, error) {
	for {
		if f.err != nil {
			return nil, f.err
		}
		var msg jsonrpc.Message
		_, msg, f.err = f.next()
		if msg != nil {
			return msg, nil
		}
	}
}

// Close closes the input, as the SDK's stdio transport does.
func (f *lineFilter) Close() error {
	f.closed.Store(true)
	if f.closer != nil {
		return f.closer.Close()
	}
	return nil
}

// next reads one line. It returns the line with its newline, and the
// message the SDK decodes from it, when it is a message to pass on;
// otherwise it answers it (or skips a blank line) and returns nil. err is
// the input's error (io.EOF at the end), if any.
func (f *lineFilter) next() (line []byte, msg jsonrpc.Message, err error) {
	f.line = f.line[:0]
	size, tooLong := 0, false
	for {
		var chunk []byte
		chunk, err = f.in.ReadSlice('\n')
		size += len(chunk)
		switch {
		case tooLong:
		case len(f.line)+len(chunk) > f.max+len("\r\n"):
			// Skip the rest as it arrives rather than gather it.
			tooLong, f.line = true, nil
		default:
			f.line = appendDoubling(f.line, chunk, f.max+len("\r\n"))
		}
		if err != bufio.ErrBufferFull {
			break
		}
	}
	line = bytes.TrimSpace(f.line)
	if len(line) > f.max {
		tooLong = true
	}
	if tooLong {
		f.reject(&rejection{code: jsonrpc.CodeInvalidRequest, message: fmt.Sprintf("Invalid Request: a message of more than %d bytes was skipped; "+
			"send less in one message (a program can read large data from a file)", f.max)}, size)
		return nil, nil, err
	}
	if len(line) == 0 {
		return nil, nil, err
	}
	// The message is decoded from a copy of its own: f.line is read into
	// again while the SDK handles it.
	line = append(make([]byte, 0, len(line)+1), line...)
	if cap(f.line) > stdioReadBuffer*4 {
		f.line = nil // a long line's buffer is not kept for the short ones after it
	}
	msg, r := check(line)
	if r != nil {
		f.reject(r, size)
		return nil, nil, err
	}
	return append(line, '\n'), msg, err
}

// rejection is why a line is not passed on, and how to answer it.
type rejection struct {
	id      json.RawMessage // nil when unknown
	code    int64
	message string
	// silent: a broken response, which JSON-RPC never answers (a reply to
	// an error reply could go back and forth forever).
	silent bool
}

// appendDoubling appends p to b, doubling b's capacity as it grows (append
// grows large slices by a quarter: many more copies on the way to 16 MiB)
// but never past limit, which len(b)+len(p) must not exceed.
func appendDoubling(b, p []byte, limit int) []byte {
	if need := len(b) + len(p); need > cap(b) {
		grown := make([]byte, len(b), min(max(2*cap(b), need), limit))
		copy(grown, b)
		b = grown
	}
	return append(b, p...)
}

// check returns the message the SDK decodes from line, or why line is not
// one it accepts: one JSON value, a JSON object, one JSON-RPC message for
// its message decoder.
func check(line []byte) (jsonrpc.Message, *rejection) {
	if !json.Valid(line) {
		var v json.RawMessage
		return nil, &rejection{code: jsonrpc.CodeParseError, message: "Parse error: " + json.Unmarshal(line, &v).Error()}
	}
	switch line[0] {
	case '{':
	case '[':
		// MCP has no batches since 2025-06-18, and the SDK ends the
		// session on one it refuses.
		return nil, &rejection{code: jsonrpc.CodeInvalidRequest, message: "Invalid Request: batches are not supported; send one message per line"}
	default:
		return nil, &rejection{code: jsonrpc.CodeInvalidRequest, message: "Invalid Request: a message must be a JSON object"}
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err == nil {
		return msg, nil
	}
	r := &rejection{code: jsonrpc.CodeInvalidRequest, message: "Invalid Request: " + err.Error()}
	var fields map[string]json.RawMessage
	if json.Unmarshal(line, &fields) != nil {
		return nil, r
	}
	_, hasResult := fields["result"]
	_, hasError := fields["error"]
	_, hasMethod := fields["method"]
	r.silent = (hasResult || hasError) && !hasMethod
	// Only a string or a number can be an id a response carries.
	if id := fields["id"]; len(id) > 0 {
		if c := id[0]; c == '"' || c == '-' || c >= '0' && c <= '9' {
			r.id = id
		}
	}
	return nil, r
}

// reject logs a skipped line and answers it with one error response, as
// one line, unless it must not be answered.
func (f *lineFilter) reject(r *rejection, size int) {
	f.logger.Warn("stdin: not a JSON-RPC message; skipped", "code", r.code, "bytes", size, "reason", r.message, "answered", !r.silent)
	if r.silent || f.closed.Load() {
		return
	}
	id := r.id
	if id == nil {
		id = json.RawMessage("null")
	}
	data, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: r.code, Message: r.message}})
	if err != nil {
		f.logger.Error("encode an error reply", "err", err)
		return
	}
	if _, err := f.out.Write(append(data, '\n')); err != nil {
		f.logger.Warn("write an error reply", "err", err)
	}
}
