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

// stdioTransport is the SDK's newline-delimited transport over in and out,
// behind a filter that hands the SDK only well-formed JSON-RPC messages,
// with the plain calls of the direct tools answered beside it (direct.go).
//
// The SDK reads its input with one streaming JSON decoder that cannot
// resynchronize: a line that is not JSON, a batch, a message it refuses or
// an oversized frame ends the session with no reply, and a truncated object
// leaves it waiting for the rest. The filter frames input by lines (MCP's
// stdio framing: one message per line, no embedded newlines), answers each
// bad line with the JSON-RPC error it deserves and goes on to the next.
// Only messages the SDK's own decoder accepts pass; the SDK is left to
// answer everything else (unknown methods, bad params) itself.
func stdioTransport(in io.Reader, out io.Writer, logger *slog.Logger, direct ...directTool) mcp.Transport {
	w := &syncWriter{w: out}
	tools := make(map[string]directTool, len(direct))
	for _, t := range direct {
		tools[t.name] = t
	}
	return &filteredTransport{out: w, tools: tools, logger: logger, io: &mcp.IOTransport{
		Reader: newLineFilter(in, w, maxLineBytes, logger),
		Writer: w,
		// Each line the filter passes is within maxLineBytes already; the
		// SDK's count is per decoder read, which may run past one line.
		MaxLineLength: -1,
	}}
}

// filteredTransport is the SDK's newline-delimited transport, except that
// a successful response is written as it is (see stdioConn.Write) and the
// direct tools' plain calls are answered without the SDK.
type filteredTransport struct {
	out    *syncWriter
	io     *mcp.IOTransport
	tools  map[string]directTool
	logger *slog.Logger
}

func (t *filteredTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.io.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &stdioConn{Connection: c, out: t.out, direct: &directCalls{tools: t.tools, logger: t.logger}}, nil
}

// stdioConn writes a successful response around its result as the SDK
// encoded it: the SDK's own Write encodes the response again, and
// encoding/json re-validates the result's bytes there, a pass over the
// whole result (a third of the SDK's work on an omni_query answer). The
// SDK keeps the rest: reading, and every other message it sends. Batches,
// which its Write would otherwise have to answer as one, never reach it
// (the filter refuses them).
type stdioConn struct {
	mcp.Connection
	out    *syncWriter
	direct *directCalls
}

// Read returns the next message for the SDK, answering the plain calls of
// direct tools on the way.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			return nil, err
		}
		if req, ok := msg.(*jsonrpc.Request); !ok || !c.direct.seen(req, c) {
			return msg, nil
		}
	}
}

func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	resp, ok := msg.(*jsonrpc.Response)
	if ok {
		// Before the answer goes out: the client's next call may follow it
		// at once.
		c.direct.answered(resp)
	}
	// A result with a newline in it (the SDK's are compact) is left to the
	// SDK, which compacts it: a message is one line.
	if !ok || resp.Error != nil || len(resp.Result) == 0 || !resp.ID.IsValid() || bytes.IndexByte(resp.Result, '\n') >= 0 {
		return c.Connection.Write(ctx, msg)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return c.writeResult(resp.ID, resp.Result)
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

// Close ends the direct calls in flight, then the SDK's connection.
func (c *stdioConn) Close() error {
	c.direct.close()
	return c.Connection.Close()
}

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

// lineFilter reads lines from in and yields those that are JSON-RPC
// messages, each with its newline; it answers the others on out. It is
// read by the SDK's one reading goroutine.
type lineFilter struct {
	in      *bufio.Reader
	closer  io.Closer // in, if it can be closed
	out     io.Writer
	max     int
	logger  *slog.Logger
	line    []byte // the line being gathered
	pending []byte // the rest of an accepted line, not yet read
	err     error  // what ended the input, returned once pending is read
	closed  atomic.Bool
}

func newLineFilter(in io.Reader, out io.Writer, max int, logger *slog.Logger) *lineFilter {
	f := &lineFilter{in: bufio.NewReaderSize(in, stdioReadBuffer), out: out, max: max, logger: logger}
	f.closer, _ = in.(io.Closer)
	return f
}

func (f *lineFilter) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		f.pending, f.err = f.next()
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

// Close closes the input, as the SDK's stdio transport does.
func (f *lineFilter) Close() error {
	f.closed.Store(true)
	if f.closer != nil {
		return f.closer.Close()
	}
	return nil
}

// next reads one line. It returns the line with its newline when it is a
// message to pass on; otherwise it answers it (or skips a blank line) and
// returns nil. err is the input's error (io.EOF at the end), if any.
func (f *lineFilter) next() (msg []byte, err error) {
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
	line := bytes.TrimSpace(f.line)
	if len(line) > f.max {
		tooLong = true
	}
	if tooLong {
		f.reject(&rejection{code: jsonrpc.CodeInvalidRequest, message: fmt.Sprintf("Invalid Request: a message of more than %d bytes was skipped; "+
			"send less in one message (a program can read large data from a file)", f.max)}, size)
		return nil, err
	}
	if cap(f.line) > stdioReadBuffer*4 {
		f.line = nil // a long line's buffer is not kept for the short ones after it
	}
	if len(line) == 0 {
		return nil, err
	}
	if r := check(line); r != nil {
		f.reject(r, size)
		return nil, err
	}
	return append(line, '\n'), err
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

// check returns why a line is not a message the SDK accepts, or nil if it
// is: one JSON value for its streaming decoder (encoding/json), and one
// JSON-RPC message for its message decoder.
func check(line []byte) *rejection {
	if !json.Valid(line) {
		var v json.RawMessage
		return &rejection{code: jsonrpc.CodeParseError, message: "Parse error: " + json.Unmarshal(line, &v).Error()}
	}
	switch line[0] {
	case '{':
	case '[':
		// MCP has no batches since 2025-06-18, and the SDK ends the
		// session on one it refuses.
		return &rejection{code: jsonrpc.CodeInvalidRequest, message: "Invalid Request: batches are not supported; send one message per line"}
	default:
		return &rejection{code: jsonrpc.CodeInvalidRequest, message: "Invalid Request: a message must be a JSON object"}
	}
	_, err := jsonrpc.DecodeMessage(line)
	if err == nil {
		return nil
	}
	r := &rejection{code: jsonrpc.CodeInvalidRequest, message: "Invalid Request: " + err.Error()}
	var fields map[string]json.RawMessage
	if json.Unmarshal(line, &fields) != nil {
		return r
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
	return r
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
