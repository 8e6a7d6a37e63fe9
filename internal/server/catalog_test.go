package server

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/omnidev/omnidev/internal/capability"
	"github.com/omnidev/omnidev/internal/testrepo"
)

// TestCatalogGolden snapshots prompts/list, resources/list and
// resources/templates/list of this repository's omni/.
// Rewrite with: go test ./internal/server -run TestCatalogGolden -update
func TestCatalogGolden(t *testing.T) {
	cs, _, _, _ := newTestServer(t, nil)
	ctx := t.Context()
	prompts, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "prompts_list.golden.json", prompts.Prompts)
	resources, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "resources_list.golden.json", resources.Resources)
	templates, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "resource_templates_list.golden.json", templates.ResourceTemplates)
}

func TestInstructions(t *testing.T) {
	if len(instructions) > maxInstructions {
		t.Errorf("instructions are %d bytes, more than %d", len(instructions), maxInstructions)
	}
	for _, want := range []string{"omni_query", "omni_execute", "prompt", "resources/read", "omni://", "types.d.ts", "runs.undo", "omni://runs/<id>/diff"} {
		if !strings.Contains(instructions, want) {
			t.Errorf("instructions do not mention %q", want)
		}
	}
}

// wantRPCError checks that err is a JSON-RPC invalid params error whose
// message mentions each of want.
func wantRPCError(t *testing.T, err error, want ...string) {
	t.Helper()
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("err = %v; want a JSON-RPC invalid params error", err)
	}
	for _, w := range want {
		if !strings.Contains(rpcErr.Message, w) {
			t.Errorf("error %q does not mention %q", rpcErr.Message, w)
		}
	}
}

func TestGetPrompt(t *testing.T) {
	cs, _, _, _ := newTestServer(t, nil)
	tests := []struct {
		name    string
		prompt  string
		args    map[string]string
		want    []string // parts of the message text
		wantErr []string // parts of the error message
	}{
		{
			name:   "declared arguments",
			prompt: "tasks-plan-work",
			args:   map[string]string{"request": "fix the flaky login test", "tag": "bug"},
			want: []string{
				`Skill "plan-work" of the tasks capability: in programs run with omni_execute, import its functions from "tasks".` + "\n\n# Plan and track",
				"The request: fix the flaky login test\n",
				`Tag the tasks you add with "bug"`,
				"console.log(`#${t.id} [${t.status}] ${t.title}`)",
			},
		},
		{
			name:   "$ARGUMENTS",
			prompt: "repo-find-and-edit",
			args:   map[string]string{"arguments": "rename parseConfig to loadConfig"},
			want:   []string{`import its functions from "repo"`, "The change to make: rename parseConfig to loadConfig\n"},
		},
		{
			name:   "optional argument left out",
			prompt: "repo-find-and-edit",
			want:   []string{"The change to make: \n"},
		},
		{name: "required argument missing", prompt: "tasks-plan-work", args: map[string]string{"tag": "bug"}, wantErr: []string{`prompt "tasks-plan-work"`, `needs the argument "request" (The work to plan, in a sentence)`}},
		{name: "unknown argument", prompt: "tasks-plan-work", args: map[string]string{"request": "x", "priority": "1"}, wantErr: []string{`no argument "priority"`, "request, tag"}},
		{name: "unknown prompt", prompt: "tasks-plan", wantErr: []string{`unknown prompt "tasks-plan"`, "repo-find-and-edit, tasks-plan-work"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: tt.prompt, Arguments: tt.args})
			if tt.wantErr != nil {
				wantRPCError(t, err, tt.wantErr...)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Messages) != 1 || res.Messages[0].Role != "user" {
				t.Fatalf("messages = %+v; want one user message", res.Messages)
			}
			text := res.Messages[0].Content.(*mcp.TextContent).Text
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("message does not contain %q:\n%s", w, text)
				}
			}
			if res.Description == "" {
				t.Error("no description")
			}
		})
	}
}

func TestReadResource(t *testing.T) {
	// A doc of a capability that is not enabled, and a file next to the
	// capabilities: neither may ever be read.
	cs, _, eng, _ := newTestServer(t, map[string]string{
		"omni/capabilities/secret/capability.toml": "[capability]\nid = \"secret\"\n",
		"omni/capabilities/secret/definition.md":   "# Secret\n",
		"omni/capabilities/notes.md":               "# Notes\n",
	})
	root := eng.Root()
	ctx := t.Context()

	list, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range list.Resources {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: r.URI})
		if err != nil {
			t.Errorf("read %s: %v", r.URI, err)
			continue
		}
		c := res.Contents[0]
		rel := strings.TrimPrefix(r.URI, "omni://")
		disk, err := os.ReadFile(filepath.Join(root, "omni", "capabilities", filepath.FromSlash(rel)))
		if err != nil || c.Text != string(disk) || c.URI != r.URI || c.MIMEType != r.MIMEType || int64(len(c.Text)) != r.Size {
			t.Errorf("read %s: %d bytes of %s, listed %d bytes of %s; the file holds %d bytes (%v)", r.URI, len(c.Text), c.MIMEType, r.Size, r.MIMEType, len(disk), err)
		}
	}

	for _, tt := range []struct{ uri, want string }{
		{"omni://tasks/../secret/definition.md", "leaves the capability folder"},
		{"omni://tasks/docs/../../secret/definition.md", "leaves the capability folder"},
		{"omni://tasks/docs/%2e%2e/%2e%2e/secret/definition.md", "leaves the capability folder"},
		{"omni://tasks/docs/..%2F..%2F..%2Fnotes.md", "leaves the capability folder"},
		{"omni://secret/definition.md", `capability "secret" is not enabled`},
		{"omni://tasks/capability.toml", "capability.toml is not a file of capability tasks that can be read"},
		{"omni://tasks/index.ts", "index.ts is not a file"},
		{"omni://tasks/docs/nope.md", "docs/nope.md is not a file"},
		{"omni://tasks/skills/x/SKILL.md", "skills/x/SKILL.md is not a file"},
	} {
		t.Run(tt.uri, func(t *testing.T) {
			_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: tt.uri})
			wantRPCError(t, err, tt.want)
		})
	}
	t.Run("percent-encoded path of a doc", func(t *testing.T) {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "omni://tasks/docs/usage%2Emd"})
		if err != nil || res.Contents[0].URI != "omni://tasks/docs/usage.md" || !strings.HasPrefix(res.Contents[0].Text, "#") {
			t.Errorf("read = %+v, %v; want tasks/docs/usage.md", res, err)
		}
	})
}

func TestComplete(t *testing.T) {
	cs, _, _, _ := newTestServer(t, nil)
	tests := []struct {
		name    string
		ref     *mcp.CompleteReference
		arg     string
		value   string
		context map[string]string
		want    []string
		wantErr string
	}{
		{name: "capability ids", ref: &mcp.CompleteReference{Type: "ref/resource", URI: "omni://{capability}/docs/{path}"}, arg: "capability", want: []string{"repo", "tasks"}},
		{name: "capability prefix", ref: &mcp.CompleteReference{Type: "ref/resource", URI: "omni://{capability}/types.d.ts"}, arg: "capability", value: "T", want: []string{"tasks"}},
		{name: "doc paths of one capability", ref: &mcp.CompleteReference{Type: "ref/resource", URI: "omni://{capability}/docs/{path}"}, arg: "path", context: map[string]string{"capability": "tasks"}, want: []string{"storage.md", "usage.md"}},
		{name: "doc paths of all", ref: &mcp.CompleteReference{Type: "ref/resource", URI: "omni://{capability}/docs/{path}"}, arg: "path", value: "u", want: []string{"usage.md"}},
		{name: "rules", ref: &mcp.CompleteReference{Type: "ref/resource", URI: "omni://{capability}/rules/{path}"}, arg: "path", context: map[string]string{"capability": "repo"}, want: []string{"edits.md", "paths.md"}},
		{name: "skill folders", ref: &mcp.CompleteReference{Type: "ref/resource", URI: "omni://{capability}/skills/{skill}/SKILL.md"}, arg: "skill", want: []string{"find-and-edit", "plan-work"}},
		{name: "tool names, none without a wrapped server", ref: &mcp.CompleteReference{Type: "ref/resource", URI: "omni://{capability}/tools/{tool}.d.ts"}, arg: "tool", want: []string{}},
		{name: "prompt argument values", ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "tasks-plan-work"}, arg: "tag", value: "f", want: []string{"feature"}},
		{name: "prompt argument without values", ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "tasks-plan-work"}, arg: "request", want: []string{}},
		{name: "unknown prompt", ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "nope"}, arg: "x", wantErr: `unknown prompt "nope"`},
		{name: "unknown prompt argument", ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "tasks-plan-work"}, arg: "x", wantErr: `has no argument "x"`},
		{name: "unknown template", ref: &mcp.CompleteReference{Type: "ref/resource", URI: "omni://{x}"}, arg: "x", wantErr: "unknown resource template"},
		{name: "unknown variable", ref: &mcp.CompleteReference{Type: "ref/resource", URI: "omni://{capability}/types.d.ts"}, arg: "path", wantErr: `has no variable "path"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &mcp.CompleteParams{Ref: tt.ref, Argument: mcp.CompleteParamsArgument{Name: tt.arg, Value: tt.value}}
			if tt.context != nil {
				p.Context = &mcp.CompleteContext{Arguments: tt.context}
			}
			res, err := cs.Complete(t.Context(), p)
			if tt.wantErr != "" {
				wantRPCError(t, err, tt.wantErr)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(res.Completion.Values, tt.want) {
				t.Errorf("values = %q, want %q", res.Completion.Values, tt.want)
			}
		})
	}
}

// TestCatalogReload checks that a reload updates the prompts and resources,
// tells the client their lists changed, and tells a subscriber that its
// resource changed: with the protocol hosts speak today, and with the latest,
// where the go-sdk client subscribes through subscriptions/listen.
func TestCatalogReload(t *testing.T) {
	for _, version := range []string{"2025-11-25", ""} {
		t.Run("protocol "+cmp.Or(version, "latest"), func(t *testing.T) { testCatalogReload(t, version) })
	}
}

func testCatalogReload(t *testing.T, protocolVersion string) {
	_, srv, eng, _ := newTestServer(t, nil)
	root := eng.Root()
	promptsChanged, resourcesChanged := make(chan struct{}, 8), make(chan struct{}, 8)
	updated := make(chan string, 8)
	cs := connectWith(t, srv, &mcp.ClientOptions{
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { promptsChanged <- struct{}{} },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { resourcesChanged <- struct{}{} },
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			updated <- r.Params.URI
		},
	}, protocolVersion)
	ctx := t.Context()
	const usage = "omni://tasks/docs/usage.md"
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: usage}); err != nil {
		t.Fatal(err)
	}
	if protocolVersion != "" {
		// With the latest protocol, the client's Subscribe does not wait for
		// the server's answer, and (go-sdk v1.8.0) the end of a refused
		// subscription also ends the session's list_changed subscriptions.
		err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "omni://tasks/docs/nope.md"})
		wantRPCError(t, err, "docs/nope.md is not a file")
	}

	testrepo.WriteFiles(t, root, map[string]string{
		"omni/capabilities/tasks/docs/usage.md":              "# Usage\n\nRewritten.\n",
		"omni/capabilities/tasks/skills/triage/SKILL.md":     "---\nname: triage\ndescription: Sort tasks\n---\nSort $ARGUMENTS\n",
		"omni/capabilities/repo/docs/globs.md":               "# Globs\n\nUnchanged length? No: changed.\n",
		"omni/capabilities/tasks/rules/task-hygiene.md.orig": "not a rule",
	})
	if err := eng.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	wait := func(what string, ch chan struct{}) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatalf("no %s notification", what)
		}
	}
	wait("prompts/list_changed", promptsChanged)
	wait("resources/list_changed", resourcesChanged)
	select {
	case uri := <-updated:
		if uri != usage {
			t.Errorf("resources/updated for %s; subscribed only to %s", uri, usage)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no resources/updated notification for the subscribed doc")
	}

	prompts, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(prompts.Prompts, func(p *mcp.Prompt) bool { return p.Name == "tasks-triage" })
	if i < 0 || len(prompts.Prompts[i].Arguments) != 1 || prompts.Prompts[i].Arguments[0].Name != "arguments" {
		t.Fatalf("prompts after reload: %+v; want tasks-triage with the implicit argument", prompts.Prompts)
	}
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: usage})
	if err != nil || res.Contents[0].Text != "# Usage\n\nRewritten.\n" {
		t.Errorf("read after reload = %+v, %v; want the new text", res, err)
	}

	// Removing the skill removes its prompt and its resource.
	if err := os.RemoveAll(filepath.Join(root, "omni", "capabilities", "tasks", "skills", "triage")); err != nil {
		t.Fatal(err)
	}
	if err := eng.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	wait("prompts/list_changed", promptsChanged)
	if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "tasks-triage"}); err == nil {
		t.Error("the prompt of a removed skill still answers")
	}
	_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "omni://tasks/skills/triage/SKILL.md"})
	wantRPCError(t, err, "is not a file")
}

// TestReadmeCatalog checks that the documentation (the README or a page
// under docs/) names exactly the prompts (as Claude Code's slash commands)
// and resources generated for this repository's own omni/.
func TestReadmeCatalog(t *testing.T) {
	pages, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	var readme []byte
	for _, name := range append([]string{filepath.Join("..", "..", "README.md")}, pages...) {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		readme = append(readme, data...)
	}
	cs, _, _, _ := newTestServer(t, nil)
	prompts, err := cs.ListPrompts(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range prompts.Prompts {
		if cmd := "/mcp__omnidev__" + p.Name; !strings.Contains(string(readme), cmd) {
			t.Errorf("neither the README nor docs/ shows the slash command %s", cmd)
		}
	}
	resources, err := cs.ListResources(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range resources.Resources {
		if !strings.Contains(string(readme), "`"+r.URI+"`") {
			t.Errorf("neither the README nor docs/ lists the resource %s", r.URI)
		}
	}
	for _, tmpl := range resourceTemplates {
		if !strings.Contains(string(readme), "`"+tmpl.URITemplate+"`") {
			t.Errorf("neither the README nor docs/ lists the resource template %s", tmpl.URITemplate)
		}
	}
}

// TestToolResource: the declaration of one tool of a wrapped server is read
// through the tools template, holds that tool's function alone, and a tool
// the server does not list is an error that says how to find them.
func TestToolResource(t *testing.T) {
	zones := (&capability.Capability{ID: "zones", Module: "zones", MCP: &capability.MCPServer{Command: "zones-server"}}).WithTools([]capability.Tool{
		{Name: "get_zone_2", Description: "Returns zone 2.", InputSchema: []byte(`{"type":"object","properties":{"zone_id":{"type":"string"}},"required":["zone_id"]}`)},
		{Name: "get_zone_1", Description: "Returns zone 1."},
	}, "")
	st := newCatalogState(&capability.Registry{Capabilities: []*capability.Capability{zones}}, slog.New(slog.DiscardHandler))

	uri := capability.ToolURI("zones", "get_zone_2")
	r, err := st.lookup(uri)
	if err != nil {
		t.Fatal(err)
	}
	if r.resource.URI != uri || r.resource.MIMEType != mimeTypeScript || r.resource.Size != int64(len(r.text)) ||
		!strings.Contains(r.text, "export function getZone2(args: {") || strings.Contains(r.text, "getZone1") {
		t.Errorf("%s: %+v\n%s", uri, r.resource, r.text)
	}
	if _, err := st.lookup(capability.ToolURI("zones", "get_zone_3")); err == nil || !strings.Contains(err.Error(), `has no tool "get_zone_3"`) {
		t.Errorf("unknown tool: %v", err)
	}
	if got, want := st.toolNames(""), []string{"get_zone_1", "get_zone_2"}; !slices.Equal(got, want) {
		t.Errorf("toolNames = %q, want %q", got, want)
	}
}
