package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestEndToEndFirstQuerySaysStarting: the agent's first query after start
// says that the wrapped server is starting, rather than showing it without
// tools, and a program that imports it at once waits for it.
func TestEndToEndFirstQuerySaysStarting(t *testing.T) {
	root := wrappedRepo(t)
	s := startServer(t, root)
	var q struct {
		Summary []struct {
			ID       string
			Tools    *int
			Error    string
			Starting bool
		}
		TypeDefinitions string `json:"type_definitions"`
	}
	s.call(t, t.Context(), "omni_query", map[string]any{"include_types": true}, &q)
	if len(q.Summary) != 2 || q.Summary[1].ID != "omnidev" {
		t.Fatalf("summary %+v, want the wrapped server and the built-in omnidev", q.Summary)
	}
	if c := q.Summary[0]; c.Tools == nil || *c.Tools != 0 || !c.Starting || !strings.Contains(c.Error, "starting") {
		t.Errorf("first query: %+v; want it starting, with no tools yet", c)
	}
	if !strings.Contains(q.TypeDefinitions, "No type definitions yet: starting") {
		t.Errorf("type definitions do not say the server is starting:\n%s", q.TypeDefinitions)
	}

	var res struct {
		ExitCode int `json:"exit_code"`
		Stdout   string
		Stderr   string
	}
	code := `import { getSum } from "everything";
console.log((await getSum({ a: 40, b: 2 })).text);`
	s.call(t, t.Context(), "omni_execute", map[string]any{"code": code}, &res)
	if res.ExitCode != 0 || !strings.Contains(res.Stdout, "The sum of 40 and 2 is 42.") {
		t.Errorf("a run at once: exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}
}

// TestEndToEndTypesResourceWithoutTypes: reading the types.d.ts of a
// capability that has none says why (its MCP server did not list tools, no
// file beside its index.ts), never that the file cannot be read while
// naming it readable; another unreadable file lists the readable ones.
func TestEndToEndTypesResourceWithoutTypes(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "omni/config.toml", "[capabilities]\nenable = [\"broken\", \"bare\"]\n")
	writeFile(t, root, "omni/capabilities/broken/capability.toml", "[capability]\nid = \"broken\"\n[mcp]\ncommand = \"/no/such/server\"\n")
	writeFile(t, root, "omni/capabilities/bare/capability.toml", "[capability]\nid = \"bare\"\n")
	writeFile(t, root, "omni/capabilities/bare/index.ts", "export const x = 1;\n")
	writeFile(t, root, "omni/capabilities/bare/rules/style.md", "# Style\n\nShort names.\n")
	git(t, root, "init", "-q", "-b", "main")
	s := startServer(t, root)
	for _, tt := range []struct{ uri, want string }{
		{"omni://broken/types.d.ts", "capability broken has no type definitions yet"},
		{"omni://bare/types.d.ts", "capability bare has no types.d.ts"},
		{"omni://bare/capability.toml", "its readable files: rules/style.md"},
	} {
		deadline := time.Now().Add(10 * time.Second)
		for {
			_, err := s.session.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: tt.uri})
			if err != nil && strings.Contains(err.Error(), tt.want) && !strings.Contains(err.Error(), "resources are definition.md") {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("resources/read %s: %v; want an error saying %q", tt.uri, err, tt.want)
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}
