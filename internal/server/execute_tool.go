package server

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/omnidev/omnidev/internal/engine"
	"github.com/omnidev/omnidev/internal/execute"
)

type executeParams struct {
	Code      string `json:"code" jsonschema:"A complete TypeScript program. Import capability modules by name (import { x } from \"<module>\"). Export an async main() returning an exit code, or write top-level code. It runs from the repository root."`
	TimeoutMS *int64 `json:"timeout_ms,omitempty" jsonschema:"Stop the program after this many milliseconds. The configured timeout (30 s by default) is the most a call can get."`
}

func addExecuteTool(s *mcp.Server, e *engine.Engine, requests *httpRequests) error {
	in, err := jsonschema.For[executeParams](nil)
	if err != nil {
		return fmt.Errorf("omni_execute input schema: %w", err)
	}
	in.Properties["timeout_ms"].Types, in.Properties["timeout_ms"].Type = nil, "integer"
	out, err := outputSchema[execute.Result]()
	if err != nil {
		return fmt.Errorf("omni_execute output schema: %w", err)
	}
	addTool(s, &mcp.Tool{
		Name: "omni_execute",
		Description: "Run one TypeScript program in the repository's sandbox, with the capability modules importable by name. " +
			"Returns its exit_code, stdout and stderr (long output keeps head and tail), and exactly what this run changed: " +
			"changed_files, diff_stat {files, insertions, deletions} and per-file changes. A program that fails is a normal result " +
			"with a non-zero exit_code; read stderr and try again.",
		InputSchema:  in,
		OutputSchema: out,
		Annotations: &mcp.ToolAnnotations{
			Title:           "Run a program",
			ReadOnlyHint:    false,
			DestructiveHint: boolPtr(true),
			IdempotentHint:  false,
			OpenWorldHint:   boolPtr(true),
		},
	}, e.Logger(), func(ctx context.Context, req *mcp.CallToolRequest, p executeParams) (any, error) {
		if rc := requests.context(req.Extra); rc != nil {
			var cancel context.CancelFunc
			ctx, cancel = context.WithCancel(ctx)
			defer cancel()
			defer context.AfterFunc(rc, cancel)()
		}
		r := engine.ExecRequest{Code: p.Code}
		if p.TimeoutMS != nil {
			if *p.TimeoutMS <= 0 {
				return nil, fmt.Errorf("%w: timeout_ms must be a positive number of milliseconds, got %d", execute.ErrInvalidTimeout, *p.TimeoutMS)
			}
			r.Timeout = time.Duration(*p.TimeoutMS) * time.Millisecond
		}
		if token := req.Params.GetProgressToken(); token != nil {
			r.Progress = progressReporter(ctx, req.Session, token)
		}
		res, err := e.Execute(ctx, r)
		if err != nil && !isAgentError(err) {
			e.Logger().Error("omni_execute failed", "err", err)
		}
		return res, err
	})
	return nil
}

// isAgentError reports whether err is one the agent can act on (as opposed
// to a fault of the server, which is logged as well).
func isAgentError(err error) bool {
	for _, target := range []error{execute.ErrRuntimeNotFound, execute.ErrEmptyCode, execute.ErrCodeTooLarge, execute.ErrInvalidTimeout, execute.ErrNetworkIsolation} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// progressReporter turns the executor's progress callbacks into MCP progress
// notifications, the elapsed milliseconds serving as the growing progress value.
func progressReporter(ctx context.Context, ss *mcp.ServerSession, token any) func(execute.Progress) {
	return func(p execute.Progress) {
		msg := p.Message
		if msg == "" {
			msg = fmt.Sprintf("running for %s; %d bytes of stdout, %d of stderr", p.Elapsed.Round(100*time.Millisecond), p.StdoutBytes, p.StderrBytes)
		}
		ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
			ProgressToken: token,
			Progress:      float64(p.Elapsed.Milliseconds()),
			Message:       msg,
		})
	}
}
