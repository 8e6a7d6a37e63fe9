package server

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/omnidev/omnidev/internal/engine"
	"github.com/omnidev/omnidev/internal/testrepo"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// checkGolden compares v, as indented JSON, with testdata/<name>, which
// -update rewrites.
func checkGolden(t *testing.T, name string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	golden := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s changed; review the difference and run with -update if it is intended:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// TestToolsGolden snapshots tools/list — names, descriptions, schemas and
// annotations — so that any change to what agents see is a reviewed diff.
// Rewrite with: go test ./internal/server -run TestToolsGolden -update
func TestToolsGolden(t *testing.T) {
	cs, _, _, _ := newTestServer(t, nil)
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "tools_list.golden.json", tools.Tools)
}

// connect serves eng over an in-memory transport and returns a connected
// client session.
func connect(t *testing.T, srv *mcp.Server) *mcp.ClientSession {
	t.Helper()
	return connectWith(t, srv, nil, "")
}

// connectWith is connect with client options, asking for protocolVersion
// (the latest when empty).
func connectWith(t *testing.T, srv *mcp.Server, opts *mcp.ClientOptions, protocolVersion string) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, opts).Connect(t.Context(), ct, &mcp.ClientSessionOptions{ProtocolVersion: protocolVersion})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// newTestServer opens an engine on a copy of this repository's omni/ and
// serves it in memory; log collects the engine's log.
func newTestServer(t *testing.T, files map[string]string) (cs *mcp.ClientSession, srv *mcp.Server, eng *engine.Engine, log *testrepo.Buffer) {
	t.Helper()
	root := testrepo.CopyOmni(t)
	testrepo.WriteFiles(t, root, files)
	log = new(testrepo.Buffer)
	eng, err := engine.Open(t.Context(), root, engine.Options{Environ: os.Environ(), Logger: slog.New(slog.NewTextHandler(log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	srv, err = New(eng, "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	return connect(t, srv), srv, eng, log
}

func text(res *mcp.CallToolResult) string {
	if len(res.Content) != 1 {
		return fmt.Sprintf("%d content blocks", len(res.Content))
	}
	return res.Content[0].(*mcp.TextContent).Text
}

// TestToolErrors checks what the agent reads when a call cannot be
// answered: a tool error (isError) saying what to fix for what it can act
// on, whether the SDK's validation of the input schema or our handler
// refused it.
func TestToolErrors(t *testing.T) {
	cs, _, _, _ := newTestServer(t, map[string]string{
		"omni/config.toml": "[capabilities]\nenable = [\"repo\"]\n[sandbox]\nruntime = [\"no-such-runtime-omnidev\"]\n",
	})
	for _, tc := range []struct {
		name string
		tool string
		args map[string]any
		want []string
	}{
		{"limit too big", "omni_query", map[string]any{"query": "x", "limit": 500}, []string{"limit", "maximum", "100"}},
		{"limit zero", "omni_query", map[string]any{"query": "x", "limit": 0}, []string{"limit", "minimum", "1"}},
		{"limit of the wrong type", "omni_query", map[string]any{"query": "x", "limit": "ten"}, []string{"limit", "integer"}},
		{"unknown kind", "omni_query", map[string]any{"query": "x", "kinds": []string{"bogus"}}, []string{"bogus", "capability", "skill", "doc", "rule"}},
		{"unknown argument", "omni_query", map[string]any{"query": "x", "lmit": 3}, []string{"lmit"}},
		{"long query", "omni_query", map[string]any{"query": strings.Repeat("a", 1001)}, []string{"at most 1000 characters"}},
		{"no code at all", "omni_execute", map[string]any{}, []string{"code"}},
		{"code of the wrong type", "omni_execute", map[string]any{"code": 42}, []string{"code", "string"}},
		{"zero timeout", "omni_execute", map[string]any{"code": "1", "timeout_ms": 0}, []string{"timeout_ms", "minimum"}},
		{"empty code", "omni_execute", map[string]any{"code": ""}, []string{"pass a whole TypeScript program"}},
		{"code too large", "omni_execute", map[string]any{"code": strings.Repeat("/", 1<<20+1)}, []string{"limit is 1048576", "move data into a file"}},
		{"no runtime", "omni_execute", map[string]any{"code": "1"}, []string{"no-such-runtime-omnidev"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
			if err != nil {
				t.Fatalf("protocol error %v; want a tool error", err)
			}
			got := text(res)
			if !res.IsError || res.StructuredContent != nil {
				t.Errorf("isError=%v structured=%v; want a tool error without structured content", res.IsError, res.StructuredContent)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("text %.300q lacks %q", got, w)
				}
			}
		})
	}
}

// TestToolFaults checks that a failure of the server itself is logged with
// what the call asked and answered as a JSON-RPC error, not as a tool error
// the agent would try to fix, in both tools.
func TestToolFaults(t *testing.T) {
	for _, tc := range []struct {
		name    string
		tool    string
		args    map[string]any
		breakIt func(t *testing.T, eng *engine.Engine)
		log     []string
	}{
		{"index closed", "omni_query", map[string]any{"query": "tasks"}, func(t *testing.T, eng *engine.Engine) { eng.Close() },
			[]string{"omni_query failed", "query=tasks", "closed"}},
		{"run lock unreadable", "omni_execute", map[string]any{"code": "console.log(1)"}, func(t *testing.T, eng *engine.Engine) {
			lock := filepath.Join(eng.Root(), ".omni", "run.lock")
			os.Remove(lock) // opening the engine may have made it already
			if err := os.Mkdir(lock, 0o755); err != nil {
				t.Fatal(err)
			}
		}, []string{"omni_execute failed", "code_bytes=14", "run.lock"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs, _, eng, log := newTestServer(t, nil)
			tc.breakIt(t, eng)
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
			var wire *jsonrpc.Error
			if !errors.As(err, &wire) || wire.Code != jsonrpc.CodeInternalError || !strings.Contains(wire.Message, tc.tool+" failed") {
				t.Fatalf("result %+v, error %v; want a JSON-RPC internal error", res, err)
			}
			for _, w := range tc.log {
				if !strings.Contains(log.String(), w) {
					t.Errorf("log lacks %q:\n%s", w, log)
				}
			}
		})
	}
}

// TestHandlerPanic checks that a panicking handler answers its call with
// a JSON-RPC error and a logged stack, and the server goes on serving.
func TestHandlerPanic(t *testing.T) {
	cs, srv, _, log := newTestServer(t, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "boom"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		panic("kaboom")
	})
	_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "boom"})
	var wire *jsonrpc.Error
	if !errors.As(err, &wire) || wire.Code != jsonrpc.CodeInternalError || !strings.Contains(wire.Message, "internal error in boom: kaboom") {
		t.Fatalf("error %v; want a JSON-RPC internal error naming the tool and the panic", err)
	}
	if !strings.Contains(log.String(), "panicked") || !strings.Contains(log.String(), "goroutine") {
		t.Errorf("log has no panic and stack:\n%s", log)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "omni_query", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("after the panic: %v %+v", err, res)
	}
}

// TestTextNotHTMLEscaped checks that the text content an agent reads holds
// type definitions as written, not with <, > and & escaped.
func TestTextNotHTMLEscaped(t *testing.T) {
	const decl = "export function all<T>(xs: Promise<T>[]): Promise<T[]>;\nexport type Both = A & B;"
	cs, _, _, _ := newTestServer(t, map[string]string{
		"omni/config.toml":                          "[capabilities]\nenable = [\"generic\"]\n",
		"omni/capabilities/generic/capability.toml": "[capability]\nid = \"generic\"\ndescription = \"Generic helpers\"\n",
		"omni/capabilities/generic/index.ts":        "export const all = Promise.all.bind(Promise);\n",
		"omni/capabilities/generic/types.d.ts":      decl + "\n",
	})
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "omni_query", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("query: %v %+v", err, res)
	}
	got := text(res)
	for _, w := range []string{"all<T>(xs: Promise<T>[]): Promise<T[]>", "A & B"} {
		if !strings.Contains(got, w) {
			t.Errorf("text content lacks %q:\n%s", w, got)
		}
	}
	var decoded struct {
		TypeDefinitions string `json:"type_definitions"`
	}
	if err := json.Unmarshal([]byte(got), &decoded); err != nil || !strings.Contains(decoded.TypeDefinitions, "export type Both = A & B;") {
		t.Errorf("text content does not decode to the declarations: %v\n%s", err, got)
	}
}

// TestResultsMatchOutputSchema checks the tools' results against the output
// schemas that tools/list advertises. The SDK does not check them on each
// call (see result), so this test does, over the shapes a result takes:
// summary, hits, types, and a run that changed files.
func TestResultsMatchOutputSchema(t *testing.T) {
	cs, _, _, _ := newTestServer(t, nil)
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]*jsonschema.Resolved{}
	for _, tool := range tools.Tools {
		data, err := json.Marshal(tool.OutputSchema)
		if err != nil {
			t.Fatal(err)
		}
		var s jsonschema.Schema
		if err := json.Unmarshal(data, &s); err != nil {
			t.Fatal(err)
		}
		if schemas[tool.Name], err = s.Resolve(nil); err != nil {
			t.Fatalf("%s: resolve output schema: %v", tool.Name, err)
		}
	}
	for _, tc := range []struct {
		name string
		tool string
		args map[string]any
	}{
		{"summary", "omni_query", map[string]any{}},
		{"hits with types", "omni_query", map[string]any{"query": "tasks", "include_types": true}},
		{"hits of one kind", "omni_query", map[string]any{"query": "file", "kinds": []string{"doc"}, "limit": 3}},
		{"no hits", "omni_query", map[string]any{"query": "zzzqqqxxx"}},
		{"a run that changes files", "omni_execute", map[string]any{"code": `import { writeFileSync } from "node:fs";
writeFileSync("out.txt", "a\nb\n");
console.log("done");`}},
		{"a failing run", "omni_execute", map[string]any{"code": `throw new Error("boom");`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
			if err != nil || res.IsError {
				t.Fatalf("call: %v %s", err, text(res))
			}
			if res.StructuredContent == nil {
				t.Fatal("no structured content")
			}
			if err := schemas[tc.tool].Validate(res.StructuredContent); err != nil {
				t.Errorf("structured content does not match the output schema: %v\n%s", err, text(res))
			}
			if tc.tool == "omni_execute" {
				checkRunSummary(t, text(res), res.StructuredContent)
				return
			}
			var fromText any
			if err := json.Unmarshal([]byte(text(res)), &fromText); err != nil {
				t.Fatalf("text content is not JSON: %v", err)
			}
			if !reflect.DeepEqual(fromText, res.StructuredContent) {
				t.Errorf("text content and structured content differ:\n%s", text(res))
			}
		})
	}
}
