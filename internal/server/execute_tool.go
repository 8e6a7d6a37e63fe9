package server

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/omnidev/omnidev/internal/egress"
	"github.com/omnidev/omnidev/internal/engine"
	"github.com/omnidev/omnidev/internal/execute"
)

type executeParams struct {
	Code      string       `json:"code" jsonschema:"A complete TypeScript program. Import capability modules by name (import { x } from \"<module>\"). Export an async main() returning an exit code, or write top-level code. It runs from the repository root, and relative imports (./src/util.ts) resolve from there."`
	TimeoutMS milliseconds `json:"timeout_ms,omitempty" jsonschema:"Stop the program after this many milliseconds. The configured timeout (30 s by default) is the most a call can get."`
}

// milliseconds is a requested timeout; its schema refuses zero and
// negative values (absent means the configured timeout).
type milliseconds int64

func addExecuteTool(s *mcp.Server, e *engine.Engine, requests *httpRequests) error {
	in, err := schemaFor[executeParams](map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[milliseconds](): {Type: "integer", Minimum: jsonschema.Ptr(1.0)},
	})
	if err != nil {
		return fmt.Errorf("omni_execute input schema: %w", err)
	}
	out, err := schemaFor[execute.Result](nil)
	if err != nil {
		return fmt.Errorf("omni_execute output schema: %w", err)
	}
	out.Properties["changes"].Description = fmt.Sprintf("The files this run changed, at most %d of them: past that, those with the most "+
		"lines inserted plus deleted (ties in path order). Listed in path order.", execute.MaxListedChanges)
	out.Properties["changed_files"].Description = "The paths of the files in changes, in the same order."
	out.Properties["changes_omitted"].Description = "How many changed files changes and changed_files leave out; diff_stat counts them all."
	out.Properties["diff_stat"].Description = "Totals over every file this run changed, listed or not."
	out.Properties["network"].Description = fmt.Sprintf("With [sandbox] network as a list of hosts: every host the program tried, "+
		"whether the list let it through, its connections and bytes (at most %d hosts; network_omitted counts the rest).", egress.MaxRecorded)
	mcp.AddTool(s, &mcp.Tool{
		Name: "omni_execute",
		Description: fmt.Sprintf("Run one TypeScript program in the repository's sandbox, with the capability modules importable by name. "+
			"Returns its exit_code, stdout and stderr (long output keeps head and tail), and exactly what this run changed: "+
			"changed_files, diff_stat {files, insertions, deletions} and per-file changes (at most %d files listed; changes_omitted "+
			"counts the rest). A program that fails is a normal result with a non-zero exit_code; read stderr and try again. "+
			"It runs with Bun unless the repository's [sandbox] runtime names Deno or Node (tsx), from the repository root: "+
			"relative imports such as ./src/util.ts resolve from the root (name the file's extension). "+
			"It has network access unless [sandbox] network = false; when network lists hosts, only those, through an HTTP proxy "+
			"that HTTP_PROXY and HTTPS_PROXY name (a refused host gets HTTP 403), and network in the result says where the run went.",
			execute.MaxListedChanges),
		InputSchema:  in,
		OutputSchema: out,
		Annotations: &mcp.ToolAnnotations{
			Title:           "Run a program",
			ReadOnlyHint:    false,
			DestructiveHint: boolPtr(true),
			IdempotentHint:  false,
			OpenWorldHint:   boolPtr(true),
		},
	}, func(ctx context.Context, req *mcp.CallToolRequest, p executeParams) (*mcp.CallToolResult, any, error) {
		if rc := requests.context(req.Extra); rc != nil {
			var cancel context.CancelFunc
			ctx, cancel = context.WithCancel(ctx)
			defer cancel()
			defer context.AfterFunc(rc, cancel)()
		}
		r := engine.ExecRequest{Code: p.Code, Timeout: time.Duration(p.TimeoutMS) * time.Millisecond, TimeoutArg: "timeout_ms"}
		if token := req.Params.GetProgressToken(); token != nil {
			r.Progress = progressReporter(ctx, req.Session, token)
		}
		res, err := e.Execute(ctx, r)
		if err != nil {
			if isAgentError(err) {
				return nil, nil, err
			}
			return nil, nil, fault(e.Logger(), "omni_execute", err, "code_bytes", len(p.Code), "timeout_ms", int64(p.TimeoutMS))
		}
		return result(res)
	})
	return nil
}

// isAgentError reports whether err is one the agent can act on (or a call
// that was cancelled), as opposed to a fault of the server.
func isAgentError(err error) bool {
	for _, target := range []error{context.Canceled, context.DeadlineExceeded, execute.ErrRuntimeNotFound, execute.ErrEmptyCode, execute.ErrCodeTooLarge, execute.ErrInvalidTimeout, execute.ErrNetworkIsolation, execute.ErrIsolation} {
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
