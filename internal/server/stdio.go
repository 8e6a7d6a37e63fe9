package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxLineBytes bounds one message on stdin, as the SDK's own default does.
// A program sent to omni_execute is at most 1 MiB; anything near the bound
// is a mistake, answered and skipped.
const maxLineBytes = 16 << 20

// stdioTransport is the SDK's stdio transport over in and out, behind a
// lineFilter. The SDK reads its input with one streaming JSON decoder that
// cannot resynchronize: a line that is not JSON, a batch, a message it
// refuses or a frame over its limit ends the session with no reply
// (go-sdk issue #1209). TestSDKStdioNeedsFilter fails once it no longer
// does; the filter can go then.
func stdioTransport(in io.ReadCloser, out io.Writer, logger *slog.Logger) *mcp.IOTransport {
	w := &syncWriter{w: out}
	return &mcp.IOTransport{
		Reader: &lineFilter{in: bufio.NewReaderSize(in, 64<<10), closer: in, out: w, max: maxLineBytes, logger: logger},
		Writer: w,
		// The filter passes one line of at most maxLineBytes at a time.
		MaxLineLength: -1,
	}
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

// lineFilter reads lines (MCP's stdio framing: one message per line) and
// passes on those the SDK's transport accepts as one JSON-RPC message; it
// answers each other line with the error it deserves and goes on. It is
// read by the SDK's one reading goroutine.
type lineFilter struct {
	in      *bufio.Reader
	closer  io.Closer
	out     io.Writer
	max     int
	logger  *slog.Logger
	pending []byte // the rest of a line passed on, not yet read
	err     error  // what ended the input, returned once pending is read
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
func (f *lineFilter) Close() error { return f.closer.Close() }

// next reads one line and returns it, with a newline, if it passes; nil if
// it is blank or answered. err is the input's (io.EOF at the end).
func (f *lineFilter) next() (line []byte, err error) {
	size := 0
	for {
		var chunk []byte
		chunk, err = f.in.ReadSlice('\n')
		size += len(chunk)
		// A line over the bound is dropped as it arrives, never held whole.
		if size <= f.max+len("\r\n") {
			line = append(line, chunk...)
		} else {
			line = nil
		}
		if err != bufio.ErrBufferFull {
			break
		}
	}
	line = bytes.TrimSpace(line)
	switch {
	case size > f.max+len("\r\n") || len(line) > f.max:
		f.answer(jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, fmt.Sprintf("Invalid Request: a message of more than %d bytes was skipped; "+
			"send less in one message (a program can read large data from a file)", f.max))
	case len(line) == 0:
	case !f.passes(line):
	default:
		return append(line, '\n'), err
	}
	return nil, err
}

// passes reports whether the SDK's transport takes line as one message,
// and answers it if not. A response is never answered, even a broken one:
// a reply to an error reply could go back and forth forever.
func (f *lineFilter) passes(line []byte) bool {
	if line[0] == '{' && json.Valid(line) {
		_, err := jsonrpc.DecodeMessage(line)
		if err == nil {
			return true
		}
		var m struct {
			ID     any
			Method json.RawMessage
			Result json.RawMessage
			Error  json.RawMessage
		}
		json.Unmarshal(line, &m)
		if m.Method == nil && (m.Result != nil || m.Error != nil) {
			f.answer(jsonrpc.ID{}, 0, "")
			return false
		}
		id, _ := jsonrpc.MakeID(m.ID) // a number or a string, else none
		f.answer(id, jsonrpc.CodeInvalidRequest, "Invalid Request: "+err.Error())
		return false
	}
	var v any
	switch err := json.Unmarshal(line, &v); {
	case err != nil:
		f.answer(jsonrpc.ID{}, jsonrpc.CodeParseError, "Parse error: "+err.Error())
	case line[0] == '[':
		// MCP has no batches since 2025-06-18.
		f.answer(jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "Invalid Request: batches are not supported; send one message per line")
	default:
		f.answer(jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "Invalid Request: a message must be a JSON object")
	}
	return false
}

// answer logs a skipped line and answers it with an error response for id
// (none when the line had none, as when it was not JSON); code 0 leaves it
// unanswered.
func (f *lineFilter) answer(id jsonrpc.ID, code int64, message string) {
	f.logger.Warn("stdin: not a JSON-RPC message; skipped", "code", code, "reason", message, "answered", code != 0)
	if code == 0 {
		return
	}
	data, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: code, Message: message}})
	if err == nil {
		_, err = f.out.Write(append(data, '\n'))
	}
	if err != nil {
		f.logger.Warn("answer a line that is not a message", "err", err)
	}
}
