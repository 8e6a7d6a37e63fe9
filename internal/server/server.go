package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/omnidev/omnidev/internal/engine"
)

// instructions teach an agent the workflow: learn the modules first, then
// run one program that does the whole job.
const instructions = `omnidev gives you "code mode" over this repository.

1. Call omni_query to learn what is available: with an empty query it lists the enabled capability modules with their TypeScript type definitions; with words it searches their docs, skills and rules (set include_types to get the types of the modules it finds).
2. Call omni_execute with one complete TypeScript program that imports those modules by name (import { x } from "<module>") and does the whole job. Export an async main() that returns an exit code, or just write top-level code. It runs from the repository root; the result tells you its exit code, output, and exactly which files it changed.

Prefer one program that does several steps over many small calls.`

// New returns an MCP server named omnidev with the omni_query and
// omni_execute tools on the engine.
func New(e *engine.Engine, version string, logger *slog.Logger) (*mcp.Server, error) {
	return newServer(e, version, logger, nil)
}

// newServer is New with the HTTP request tracker of the HTTP transport.
func newServer(e *engine.Engine, version string, logger *slog.Logger, requests *httpRequests) (*mcp.Server, error) {
	s := mcp.NewServer(&mcp.Implementation{Name: "omnidev", Title: "omnidev", Version: version}, &mcp.ServerOptions{
		Instructions: instructions,
		Logger:       sdkLogger(logger),
	})
	if err := addQueryTool(s, e); err != nil {
		return nil, err
	}
	if err := addExecuteTool(s, e, requests); err != nil {
		return nil, err
	}
	return s, nil
}

// toolError is the result of a call the agent must fix or be told about.
// Its text is JSON like every other response of ours, and it carries no
// structured content, so a client never mistakes it for an empty result.
func toolError(err error) *mcp.CallToolResult {
	text, _ := json.Marshal(struct {
		Error string `json:"error"`
	}{err.Error()})
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}}
}

// toolHandler is a tool's logic: arguments in, a JSON-encodable result or
// an error the agent is told about (as a tool error) out.
type toolHandler[In any] func(ctx context.Context, req *mcp.CallToolRequest, in In) (any, error)

// addTool registers t with h. It decodes the arguments strictly itself and
// returns the result as the structured content and, encoded, as the text
// content, rather than going through mcp.AddTool's typed path, which
// validates every result against the output schema (our results match it
// by construction, and the golden test of tools/list pins the schema) and
// answers invalid arguments in its validator's plain text. Here every
// response, errors included, is JSON. A panic in h becomes a tool error and
// a logged stack: the SDK does not recover handler panics, and one would
// end every session of the process.
func addTool[In any](s *mcp.Server, t *mcp.Tool, logger *slog.Logger, h toolHandler[In]) {
	s.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
		defer func() {
			if r := recover(); r != nil {
				logger.Error("tool handler panicked", "tool", t.Name, "panic", r, "stack", string(debug.Stack()))
				res, err = toolError(fmt.Errorf("internal error in %s: %v (this is a bug in omnidev; the server's log has the details)", t.Name, r)), nil
			}
		}()
		var in In
		if args := bytes.TrimSpace(req.Params.Arguments); len(args) > 0 && !bytes.Equal(args, []byte("null")) {
			dec := json.NewDecoder(bytes.NewReader(args))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&in); err != nil {
				return toolError(fmt.Errorf("invalid arguments for %s: %w; see the tool's input schema", t.Name, err)), nil
			}
		}
		out, err := h(ctx, req, in)
		if err != nil {
			return toolError(err), nil
		}
		data, err := json.Marshal(out)
		if err != nil {
			return nil, fmt.Errorf("encode the result of %s: %w", t.Name, err)
		}
		// The structured content is the value itself, not data: encoding/json
		// re-validates a json.RawMessage byte by byte, which costs nearly
		// three times encoding the value again (29 µs against 11 µs for a
		// page of ten hits).
		return &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: string(data)}},
			StructuredContent: out,
		}, nil
	})
}

// notify sends a log message to every connected client that asked for logs.
func notify(ctx context.Context, s *mcp.Server, level mcp.LoggingLevel, msg string) {
	for ss := range s.Sessions() {
		ss.Log(ctx, &mcp.LoggingMessageParams{Level: level, Logger: "omnidev", Data: msg})
	}
}

func boolPtr(b bool) *bool { return &b }

// sdkLogger keeps the SDK's per-session chatter out of the log unless it is
// at debug level: at info, a log line per connection says nothing an
// operator needs.
func sdkLogger(l *slog.Logger) *slog.Logger {
	if l == nil || l.Enabled(context.Background(), slog.LevelDebug) {
		return l
	}
	return slog.New(minLevel{l.Handler(), slog.LevelWarn})
}

// minLevel is a slog.Handler that drops records below a level.
type minLevel struct {
	slog.Handler
	min slog.Level
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h minLevel) WithAttrs(as []slog.Attr) slog.Handler {
	return minLevel{h.Handler.WithAttrs(as), h.min}
}

func (h minLevel) WithGroup(name string) slog.Handler {
	return minLevel{h.Handler.WithGroup(name), h.min}
}
