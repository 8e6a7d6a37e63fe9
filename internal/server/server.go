package server

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/omnidev/omnidev/internal/engine"
)

// instructions teach an agent the workflow: learn the modules first, then
// run one program that does the whole job. At most maxInstructions long:
// hosts put them in every conversation.
const instructions = `omnidev gives you "code mode" over this repository, in two steps.

1. Learn: call omni_query. An empty query lists the enabled capability modules with their TypeScript type definitions, as many as fit; words search their docs, skills, rules and wrapped tools (include_types adds the types of what is found). Each result has a uri: resources/read gives the whole document, and omni://<capability>/types.d.ts a module's whole types.
2. Act: call omni_execute with one complete TypeScript program that imports those modules by name (import { x } from "<module>") and does the whole job. Export an async main() that returns an exit code, or write top-level code. It runs from the repository root; the result gives its exit code, output and exactly which files it changed.

Prefer one program that does several steps over many small calls. Each skill is also a prompt named <capability>-<skill> (a slash command in hosts that have them), and the docs, rules, skills and types are resources at omni://<capability>/<path>.

Undo a run by its run_id: runs.undo(id) from the built-in module "omnidev" (or omnidev undo); its diff is omni://runs/<id>/diff.`

// maxInstructions bounds instructions, in bytes.
const maxInstructions = 1200

// New returns an MCP server named omnidev with the omni_query and
// omni_execute tools on the engine.
func New(e *engine.Engine, version string, logger *slog.Logger) (*mcp.Server, error) {
	return newServer(e, version, logger, nil)
}

// newServer is New with the HTTP request tracker of the HTTP transport.
func newServer(e *engine.Engine, version string, logger *slog.Logger, requests *httpRequests) (*mcp.Server, error) {
	cat := newCatalog(e.Logger())
	s := mcp.NewServer(&mcp.Implementation{Name: "omnidev", Title: "omnidev", Version: version}, &mcp.ServerOptions{
		Instructions:       instructions + runtimeNotice(e),
		Logger:             sdkLogger(logger),
		Capabilities:       serverCapabilities(),
		CompletionHandler:  cat.complete,
		SubscribeHandler:   cat.subscribe,
		UnsubscribeHandler: cat.unsubscribe,
	})
	cat.attach(s, e)
	// Added last, so it wraps every other middleware too.
	s.AddReceivingMiddleware(recoverPanics(e.Logger()))
	if err := addQueryTool(s, e); err != nil {
		return nil, err
	}
	// No request is under way yet: listing the recent runs needs no
	// caller's context.
	runs := addRunResources(context.Background(), s, e)
	if err := addExecuteTool(s, e, requests, runs); err != nil {
		return nil, err
	}
	return s, nil
}

// result is a tool's successful answer: out as structured content and as
// JSON text for clients that read only text, encoded once for both. The
// handlers declare their output as any and hand the SDK a finished result,
// so the SDK neither encodes out again nor decodes it to check it against
// the output schema on every call; TestResultsMatchOutputSchema checks that
// instead. The text is encoded without HTML escaping, so type definitions
// read "Promise<T>", not "Promise\u003cT\u003e".
func result(out any) (*mcp.CallToolResult, any, error) {
	text, err := marshalText(out)
	if err != nil {
		return nil, nil, err
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: json.RawMessage(text)}, nil, nil
}

// marshalText encodes v as JSON without escaping <, > and &: the text goes
// to an agent, never into HTML.
func marshalText(v any) (string, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", fmt.Errorf("encode the result: %w", err)
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// fault logs a failure of the server itself (an unreadable index, an I/O
// error), with what the call asked, and returns it as a JSON-RPC internal
// error: unlike a tool error, it is nothing the agent can fix by calling
// differently.
func fault(logger *slog.Logger, tool string, err error, attrs ...any) error {
	logger.Error(tool+" failed", append([]any{"err", err}, attrs...)...)
	return &jsonrpc.Error{
		Code:    jsonrpc.CodeInternalError,
		Message: fmt.Sprintf("%s failed: %v (a fault of the omnidev server, not of the call; its log has the details)", tool, err),
	}
}

// recoverPanics turns a panic in a request's handler into a JSON-RPC
// internal error and a logged stack: the SDK does not recover handler
// panics, and one would end every session of the process.
func recoverPanics(logger *slog.Logger) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
			defer func() {
				if r := recover(); r != nil {
					what := method
					if call, ok := req.(*mcp.CallToolRequest); ok && call.Params != nil {
						what = call.Params.Name
					}
					logger.Error("request handler panicked", "method", method, "handler", what, "panic", r, "stack", string(debug.Stack()))
					res, err = nil, &jsonrpc.Error{
						Code:    jsonrpc.CodeInternalError,
						Message: fmt.Sprintf("internal error in %s: %v (this is a bug in omnidev; the server's log has the details)", what, r),
					}
				}
			}()
			return next(ctx, method, req)
		}
	}
}

// runtimeNotice is added to the instructions a client gets when it
// connects while programs cannot run (the runtime is missing), with the
// sentence omni_execute's tool error gives. The instructions, not a log
// message: go-sdk deprecates MCP logging, and only a client that asked for
// logs would see one.
func runtimeNotice(e *engine.Engine) string {
	if err := e.RuntimeError(); err != nil {
		return "\n\nNote: omni_execute cannot run programs on this machine: " + err.Error() + ". Tell the user; omni_query still works."
	}
	return ""
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
