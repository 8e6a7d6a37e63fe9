package server_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// wantInvalidParams checks that err is a JSON-RPC invalid params error
// mentioning want.
func wantInvalidParams(t *testing.T, err error, want string) {
	t.Helper()
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams || !strings.Contains(rpcErr.Message, want) {
		t.Errorf("err = %v; want invalid params mentioning %q", err, want)
	}
}

// receive waits for a value on ch that satisfies ok.
func receive(t *testing.T, what string, ch chan string, ok func(string) bool) {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case v := <-ch:
			if ok(v) {
				return
			}
		case <-timeout:
			t.Fatalf("no %s", what)
		}
	}
}

// TestEndToEndCatalog drives the prompts and resources of the real binary:
// skills as prompts, files as resources, the uri of query hits, and the
// notifications that follow edits on disk.
func TestEndToEndCatalog(t *testing.T) {
	root := fixtureRepo(t)
	s := startServer(t, root)
	ctx := t.Context()

	prompts, err := s.session.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range prompts.Prompts {
		names = append(names, p.Name)
	}
	if strings.Join(names, ",") != "repo-find-and-edit,tasks-plan-work" {
		t.Errorf("prompts = %v", names)
	}

	t.Run("prompt", func(t *testing.T) {
		res, err := s.session.GetPrompt(ctx, &mcp.GetPromptParams{Name: "tasks-plan-work", Arguments: map[string]string{"request": "ship the release"}})
		if err != nil {
			t.Fatal(err)
		}
		text := res.Messages[0].Content.(*mcp.TextContent).Text
		if !strings.HasPrefix(text, `Skill "plan-work" of the tasks capability: in programs run with omni_execute, import its functions from "tasks".`) ||
			!strings.Contains(text, "The request: ship the release\n") {
			t.Errorf("prompt text:\n%s", text)
		}
		_, err = s.session.GetPrompt(ctx, &mcp.GetPromptParams{Name: "tasks-plan-work"})
		wantInvalidParams(t, err, `needs the argument "request"`)
		_, err = s.session.GetPrompt(ctx, &mcp.GetPromptParams{Name: "plan-work"})
		wantInvalidParams(t, err, `unknown prompt "plan-work": prompt names are <capability>-<skill>`)
	})

	t.Run("resources", func(t *testing.T) {
		list, err := s.session.ListResources(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Resources) != 13 {
			t.Errorf("%d resources, want 13 (definition, docs, rules, skill and types of repo and tasks)", len(list.Resources))
		}
		res, err := s.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: "omni://repo/rules/paths.md"})
		disk, _ := os.ReadFile(filepath.Join(root, "omni", "capabilities", "repo", "rules", "paths.md"))
		if err != nil || res.Contents[0].Text != string(disk) || res.Contents[0].MIMEType != "text/markdown" {
			t.Errorf("read paths.md = %+v, %v", res, err)
		}
		_, err = s.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: "omni://repo/../../../README.md"})
		wantInvalidParams(t, err, "leaves the capability folder")
	})

	t.Run("query hits carry their uri", func(t *testing.T) {
		var out struct {
			Results []struct{ Source, URI string }
		}
		s.call(t, ctx, "omni_query", map[string]any{"query": "plan multi-step work", "limit": 5}, &out)
		if len(out.Results) == 0 {
			t.Fatal("no results")
		}
		for _, h := range out.Results {
			res, err := s.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: h.URI})
			if err != nil || len(res.Contents[0].Text) == 0 {
				t.Errorf("hit %s: read %q: %v", h.Source, h.URI, err)
			}
		}
		if i := slices.IndexFunc(out.Results, func(h struct{ Source, URI string }) bool { return h.Source == "skill:tasks/plan-work" }); i < 0 ||
			out.Results[i].URI != "omni://tasks/skills/plan-work/SKILL.md" {
			t.Errorf("results %+v; want skill:tasks/plan-work with uri omni://tasks/skills/plan-work/SKILL.md", out.Results)
		}
	})

	t.Run("edits on disk", func(t *testing.T) {
		const usage = "omni://tasks/docs/usage.md"
		if err := s.session.Subscribe(ctx, &mcp.SubscribeParams{URI: usage}); err != nil {
			t.Fatal(err)
		}
		// Let the subscription settle before the edit it must see.
		time.Sleep(200 * time.Millisecond)
		writeFile(t, root, "omni/capabilities/tasks/docs/usage.md", "# Usage\n\nEdited on disk.\n")
		receive(t, "resources/updated for "+usage, s.updated, func(uri string) bool { return uri == usage })
		res, err := s.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: usage})
		if err != nil || res.Contents[0].Text != "# Usage\n\nEdited on disk.\n" {
			t.Errorf("read after the edit = %+v, %v", res, err)
		}

		writeFile(t, root, "omni/capabilities/repo/skills/review/SKILL.md", "---\nname: review\ndescription: Review the change\n---\nReview $ARGUMENTS\n")
		seen := map[string]bool{}
		receive(t, "prompts/list_changed and resources/list_changed", s.listChanged, func(what string) bool {
			seen[what] = true
			return seen["prompts"] && seen["resources"]
		})
		list, err := s.session.ListResources(ctx, nil)
		if err != nil || !slices.ContainsFunc(list.Resources, func(r *mcp.Resource) bool { return r.URI == "omni://repo/skills/review/SKILL.md" }) {
			t.Errorf("resources after adding a skill lack omni://repo/skills/review/SKILL.md (%v)", err)
		}
		got, err := s.session.GetPrompt(ctx, &mcp.GetPromptParams{Name: "repo-review", Arguments: map[string]string{"arguments": "the diff"}})
		if err != nil || !strings.HasSuffix(got.Messages[0].Content.(*mcp.TextContent).Text, "Review the diff\n") {
			t.Errorf("new skill's prompt = %+v, %v", got, err)
		}
	})
}
