package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/omnidev/omnidev/internal/egress"
	"github.com/omnidev/omnidev/internal/engine"
	"github.com/omnidev/omnidev/internal/execute"
	"github.com/omnidev/omnidev/internal/typecheck"
)

type executeParams struct {
	Code      string       `json:"code" jsonschema:"A complete TypeScript program. Import capability modules by name (import { x } from \"<module>\"). Export an async main() returning an exit code, or write top-level code. It runs from the repository root, and relative imports (./src/util.ts) resolve from there."`
	TimeoutMS milliseconds `json:"timeout_ms,omitempty" jsonschema:"Stop the program after this many milliseconds. The configured timeout (30 s by default) is the most a call can get."`
	TypeCheck typeCheck    `json:"typecheck,omitempty" jsonschema:"Type-check the program against the modules' type definitions before it runs: warn runs it anyway and returns type_errors with the result, error returns them without running it, off skips the check. Default: the repository's [sandbox] typecheck (warn unless set)."`
}

// typeCheck is omni_execute's typecheck argument.
type typeCheck string

// milliseconds is a requested timeout; its schema refuses zero and
// negative values (absent means the configured timeout).
type milliseconds int64

func addExecuteTool(s *mcp.Server, e *engine.Engine, requests *httpRequests, runs *runResources) error {
	in, err := schemaFor[executeParams](map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[milliseconds](): {Type: "integer", Minimum: jsonschema.Ptr(1.0)},
		reflect.TypeFor[typeCheck]():    {Type: "string", Enum: []any{typecheck.Off, typecheck.Warn, typecheck.Error}},
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
	out.Properties["run_id"].Description = "The run's id: `omnidev runs show <id>` shows its program and diff, and `omnidev undo <id>` puts back every file it changed."
	out.Properties["network"].Description = fmt.Sprintf("With [sandbox] network as a list of hosts: every host the program tried, "+
		"whether the list let it through, its connections and bytes (at most %d hosts; network_omitted counts the rest).", egress.MaxRecorded)
	out.Properties["calls"].Description = fmt.Sprintf("The wrapped MCP servers' tools the program called, in the order it called them, at most %d: "+
		"capability, tool, ms, ok, and for a failed call the first line of its error.", execute.MaxListedCalls)
	out.Properties["calls_omitted"].Description = "How many calls past those listed in calls."
	out.Properties["typecheck"].Description = "What the type check before the run did: off, ok, errors, or \"not done: \" and why."
	out.Properties["type_errors"].Description = fmt.Sprintf("The type errors in the program, at most %d: line and column in the program as written, and the compiler's message.", typecheck.MaxErrors)
	out.Properties["type_errors_omitted"].Description = "How many type errors past those listed."
	mcp.AddTool(s, &mcp.Tool{
		Name: "omni_execute",
		Description: fmt.Sprintf("Run one TypeScript program in the repository's sandbox, with the capability modules importable by name. "+
			"Returns its exit_code, stdout and stderr (long output keeps head and tail), and exactly what this run changed: "+
			"changed_files, diff_stat {files, insertions, deletions} and per-file changes (at most %d files listed; changes_omitted "+
			"counts the rest), and calls, the wrapped tools it called. The structured content holds the result; the text content only summarizes it. A program that fails is a normal result with a non-zero exit_code; read stderr and try again. "+
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
		r := engine.ExecRequest{Code: p.Code, Timeout: time.Duration(p.TimeoutMS) * time.Millisecond, TimeoutArg: "timeout_ms", TypeCheck: string(p.TypeCheck)}
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
		runs.ran(res)
		return executeResult(res)
	})
	return nil
}

// executeResult is omni_execute's answer: the result as structured content,
// and as text a summary of the same facts that leaves the output to the
// structured content. The SDK fills in the whole JSON as text only when
// Content is nil; the output, most of an answer, would then travel twice.
func executeResult(res *execute.Result) (*mcp.CallToolResult, any, error) {
	data, err := marshalText(res)
	if err != nil {
		return nil, nil, err
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: runSummary(res)}},
		StructuredContent: json.RawMessage(data),
	}, nil, nil
}

// Bounds of runSummary's lists: the structured content lists them all.
const (
	summaryChanges    = 10
	summaryCalls      = 5
	summaryTypeErrors = 3
)

// runSummary renders a run's facts in a few lines, for the text content.
func runSummary(res *execute.Result) string {
	var b strings.Builder
	switch {
	case res.TimedOut:
		b.WriteString("timed out")
	case res.Cancelled:
		b.WriteString("cancelled")
	default:
		fmt.Fprintf(&b, "exit_code %d", res.ExitCode)
	}
	fmt.Fprintf(&b, " in %d ms", res.DurationMS)
	if res.OutOfMemory {
		b.WriteString(", out of memory")
	}
	b.WriteString(".\n")
	// Many hosts hand the model only the text content: the output must be
	// in it, whatever else is.
	for _, st := range []struct {
		name, text string
		cut        bool
	}{{"stdout", res.Stdout, res.Truncated.Stdout}, {"stderr", res.Stderr, res.Truncated.Stderr}} {
		if st.text == "" {
			continue
		}
		note := ""
		if st.cut {
			note = " (middle cut)"
		}
		fmt.Fprintf(&b, "--- %s%s\n%s", st.name, note, st.text)
		if !strings.HasSuffix(st.text, "\n") {
			b.WriteString("\n")
		}
	}
	fmt.Fprintf(&b, "--- diff_stat: %d files, +%d -%d", res.DiffStat.Files, res.DiffStat.Insertions, res.DiffStat.Deletions)
	for i, c := range res.Changes {
		if i == summaryChanges {
			fmt.Fprintf(&b, "; %d more in changes", len(res.Changes)-i)
			break
		}
		sep := ": "
		if i > 0 {
			sep = ", "
		}
		fmt.Fprintf(&b, "%s%s %s +%d -%d", sep, c.Status, c.Path, c.Insertions, c.Deletions)
	}
	if res.ChangesOmitted > 0 {
		fmt.Fprintf(&b, "; %d files not listed", res.ChangesOmitted)
	}
	b.WriteString(".\n")
	if n := len(res.Calls) + res.CallsOmitted; n > 0 {
		failed := 0
		for _, c := range res.Calls {
			if !c.OK {
				failed++
			}
		}
		fmt.Fprintf(&b, "calls: %d wrapped tool calls, %d of the listed failed", n, failed)
		shown := 0
		for _, c := range res.Calls {
			if !c.OK && shown < summaryCalls {
				fmt.Fprintf(&b, "; %s.%s: %s", c.Capability, c.Tool, c.Error)
				shown++
			}
		}
		b.WriteString(".\n")
	}
	if n := len(res.TypeErrors) + res.TypeErrorsOmitted; n > 0 {
		fmt.Fprintf(&b, "type_errors: %d", n)
		for i, e := range res.TypeErrors {
			if i == summaryTypeErrors {
				b.WriteString("; more in type_errors")
				break
			}
			fmt.Fprintf(&b, "; line %d:%d %s", e.Line, e.Column, e.Message)
		}
		b.WriteString(".\n")
	} else if res.TypeCheck != "" {
		b.WriteString("typecheck: " + res.TypeCheck + ".\n")
	}
	b.WriteString("isolation: " + res.Isolation)
	return b.String()
}

// isAgentError reports whether err is one the agent can act on (or a call
// that was cancelled), as opposed to a fault of the server.
func isAgentError(err error) bool {
	for _, target := range []error{context.Canceled, context.DeadlineExceeded, execute.ErrRuntimeNotFound, execute.ErrEmptyCode, execute.ErrCodeTooLarge, execute.ErrInvalidTimeout, execute.ErrNetworkIsolation, execute.ErrIsolation, engine.ErrInvalidTypeCheck, engine.ErrTypeCheckUnavailable} {
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
