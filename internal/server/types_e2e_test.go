package server_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tscPath is the TypeScript compiler: on PATH, or in the repository's
// .tools/ where `just deps` installs it. CI installs it: never a skip.
func tscPath(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("tsc"); err == nil {
		return p
	}
	p := filepath.Join(repoRoot(t), ".tools", "node_modules", ".bin", "tsc")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("tsc is required by this test (`just deps` installs it into .tools/): %v", err)
	}
	return p
}

// typeCheckDefinitions runs tsc --strict over type definitions as
// omni_query gives them, with a program that imports each module.
func typeCheckDefinitions(t *testing.T, what, defs string, modules []string) {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, dir, "omni.d.ts", defs)
	var program strings.Builder
	for i, m := range modules {
		program.WriteString("import * as m" + string(rune('a'+i)) + " from '" + m + "';\nvoid m" + string(rune('a'+i)) + ";\n")
	}
	writeFile(t, dir, "main.ts", program.String())
	writeFile(t, dir, "tsconfig.json", `{"compilerOptions": {"strict": true, "noEmit": true, "target": "es2022",
  "module": "preserve", "moduleResolution": "bundler", "types": [], "skipLibCheck": false},
  "files": ["omni.d.ts", "main.ts"]}`)
	cmd := exec.CommandContext(t.Context(), tscPath(t), "-p", filepath.Join(dir, "tsconfig.json"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("%s: tsc rejects the type definitions: %v\n%s\n%s", what, err, out, defs)
	}
}

// TestEndToEndTypeDefinitionsCompile: the type definitions of every kind of
// capability — hand-written types.d.ts, none at all, a wrapped stdio server —
// compile as omni_query include_types, `query --types` and `query --json`
// give them, and each module is declared once.
func TestEndToEndTypeDefinitionsCompile(t *testing.T) {
	root := fixtureRepo(t)
	for _, name := range []string{"mcp-server-everything", "mcp-server-memory"} {
		if _, err := exec.LookPath(name); err != nil {
			t.Fatalf("%s is required (npm install -g @modelcontextprotocol/server-*): %v", name, err)
		}
	}
	writeFile(t, root, "omni/config.toml", `[capabilities]
enable = ["repo", "tasks", "bare", "everything", "memory"]
`)
	writeFile(t, root, "omni/capabilities/bare/capability.toml", "[capability]\nid = \"bare\"\ndescription = \"No types\"\n")
	writeFile(t, root, "omni/capabilities/bare/index.ts", "export const x = 1;\n")
	writeFile(t, root, "omni/capabilities/everything/capability.toml", "[capability]\nid = \"everything\"\n\n[mcp]\ncommand = \"mcp-server-everything\"\nargs = [\"stdio\"]\n")
	writeFile(t, root, "omni/capabilities/memory/capability.toml", "[capability]\nid = \"memory\"\n\n[mcp]\ncommand = \"mcp-server-memory\"\nenv = { MEMORY_FILE_PATH = \".omni/state/memory.jsonl\" }\n")
	modules := []string{"repo", "tasks", "bare", "everything", "memory"}

	s := startServer(t, root)
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	var defs string
	deadline := time.Now().Add(45 * time.Second)
	for {
		var q struct {
			TypeDefinitions string `json:"type_definitions"`
		}
		s.call(t, ctx, "omni_query", map[string]any{"include_types": true}, &q)
		defs = q.TypeDefinitions
		if strings.Contains(defs, "export function echo(") && strings.Contains(defs, "export function readGraph(") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the wrapped servers' tools were never typed:\n%s", defs)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, m := range modules {
		if n := strings.Count(defs, "declare module '"+m+"'"); n != 1 {
			t.Errorf("declare module '%s' appears %d times, want once", m, n)
		}
	}
	typeCheckDefinitions(t, "omni_query include_types", defs, modules)

	cli := func(args ...string) string {
		cmd := exec.CommandContext(ctx, binary, append([]string{"--dir", root, "query"}, args...)...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("omnidev query %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	out := cli("--types")
	start := strings.Index(out, "declare module ")
	if start < 0 {
		t.Fatalf("query --types prints no declarations:\n%s", out)
	}
	typeCheckDefinitions(t, "omnidev query --types", out[start:], modules)
	var res struct {
		TypeDefinitions string `json:"type_definitions"`
	}
	if err := json.Unmarshal([]byte(cli("--json")), &res); err != nil {
		t.Fatal(err)
	}
	typeCheckDefinitions(t, "omnidev query --json", res.TypeDefinitions, modules)
}
