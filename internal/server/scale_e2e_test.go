package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/omnidev/omnidev/internal/testrepo"
)

// apiScaleTools is how many tools the wrapped server of the API-scale test
// and benchmark has, beside the test server's own.
const apiScaleTools = 10_000

// apiScaleRepo is a repository whose capability "zones" wraps the relay's
// test server serving apiScaleTools tools shaped like a big API's.
func apiScaleRepo(t testing.TB) string {
	t.Helper()
	bin := testrepo.TestServer(t)
	root := t.TempDir()
	writeFile(t, root, "omni/config.toml", "[capabilities]\nenable = [\"zones\"]\n")
	writeFile(t, root, "omni/capabilities/zones/capability.toml", fmt.Sprintf(`[capability]
id = "zones"
description = "Zones of the account"

[mcp]
command = %q
args = ["-tools", "%d"]
`, bin, apiScaleTools))
	writeFile(t, root, ".gitignore", ".omni/\n")
	git(t, root, "init", "-q", "-b", "main")
	return root
}

// lastZone is the function of the wrapped server's last API-shaped tool.
var lastZone = fmt.Sprintf("getZone%d", apiScaleTools-1)

// waitSearchable polls omni_query until the last tool is found with its
// declaration, and returns how long that took.
func waitSearchable(t testing.TB, ctx context.Context, s *server) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		var q struct {
			Results         []struct{ Name string } `json:"results"`
			TypeDefinitions string                  `json:"type_definitions"`
		}
		s.call(t, ctx, "omni_query", map[string]any{"query": strings.TrimPrefix(lastZone, "get"), "kinds": []string{"tool"}, "limit": 1, "include_types": true}, &q)
		if len(q.Results) == 1 && q.Results[0].Name == fmt.Sprintf("get_zone_%d", apiScaleTools-1) &&
			strings.Contains(q.TypeDefinitions, "export function "+lastZone+"(") {
			return time.Since(start)
		}
		if time.Since(start) > 60*time.Second {
			t.Fatalf("get_zone_%d not found after a minute", apiScaleTools-1)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// queryText calls omni_query and returns its JSON text.
func queryText(t testing.TB, ctx context.Context, s *server, args map[string]any) string {
	t.Helper()
	res := s.call(t, ctx, "omni_query", args, nil)
	return res.Content[0].(*mcp.TextContent).Text
}

// threeHits is the include_types query the test and the benchmark measure.
var threeHits = map[string]any{"query": "zone shard 12 records", "kinds": []string{"tool"}, "limit": 3, "include_types": true}

// TestEndToEndAPIScale: with a wrapped server of 10,000 tools, the empty
// query is a map, a 3-hit include_types answer declares the hits in a few
// thousand tokens and compiles against a program that uses them, the whole
// declaration is one resources/read away, and a program calls the last tool.
func TestEndToEndAPIScale(t *testing.T) {
	root := apiScaleRepo(t)
	s := startServer(t, root)
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	t.Logf("searchable after %v", waitSearchable(t, ctx, s))

	empty := queryText(t, ctx, s, map[string]any{})
	var e struct {
		Summary []struct {
			ID        string `json:"id"`
			Functions int    `json:"functions"`
			TypesNote string `json:"types_note"`
		} `json:"summary"`
		TypeDefinitions string `json:"type_definitions"`
	}
	json.Unmarshal([]byte(empty), &e)
	// The summary lists the wrapped server, then the built-in omnidev module.
	if len(empty) > 8_000 || len(e.Summary) != 2 || e.Summary[0].Functions < apiScaleTools ||
		!strings.Contains(e.Summary[0].TypesNote, "omni://zones/types.d.ts") {
		t.Errorf("empty query (%d bytes):\n%.3000s", len(empty), empty)
	}

	three := queryText(t, ctx, s, threeHits)
	var q struct {
		Results []struct {
			Name string `json:"name"`
			URI  string `json:"uri"`
		} `json:"results"`
		TypeDefinitions string `json:"type_definitions"`
	}
	json.Unmarshal([]byte(three), &q)
	if len(q.Results) != 3 || len(three) > 8_000 {
		t.Fatalf("3-hit include_types answer (%d bytes):\n%.8000s", len(three), three)
	}
	t.Logf("empty query %d bytes, 3-hit include_types answer %d bytes", len(empty), len(three))

	// The hits' declarations type a program that calls them.
	var calls strings.Builder
	for i, h := range q.Results {
		fn := "getZone" + strings.TrimPrefix(h.Name, "get_zone_")
		fmt.Fprintf(&calls, "import { %s } from \"zones\";\nconst r%d: string = (await %s({ zone_id: \"z\", page: 2 })).text;\n", fn, i, fn)
		fmt.Fprintf(&calls, "// @ts-expect-error zone_id is required\nawait %s({ page: 1 });\n", fn)
	}
	calls.WriteString("export {};\n")
	typeCheck(t, map[string]string{"zones.d.ts": q.TypeDefinitions, "program.ts": calls.String()})

	// The whole declaration stays one request away.
	rr, err := s.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: "omni://zones/types.d.ts"})
	if err != nil || len(rr.Contents) != 1 || !strings.Contains(rr.Contents[0].Text, "export function "+lastZone+"(") {
		t.Errorf("omni://zones/types.d.ts: %v, %d contents", err, len(rr.Contents))
	}

	// A tool hit's uri reads that tool's declaration alone.
	if len(q.Results) > 0 {
		h := q.Results[0]
		rr, err := s.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: h.URI})
		fn := "getZone" + strings.TrimPrefix(h.Name, "get_zone_")
		if err != nil || len(rr.Contents) != 1 || len(rr.Contents[0].Text) > 4_000 || !strings.Contains(rr.Contents[0].Text, "export function "+fn+"(") {
			t.Errorf("hit %s: read %q: %v, %d contents", h.Name, h.URI, err, len(rr.Contents))
		}
	}

	// The program's module still exports every tool: the module fitted to
	// named imports, and the whole one for a namespace import.
	programs := []struct{ name, code string }{
		{"named imports", fmt.Sprintf("import { %s, tools } from \"zones\";\nconsole.log((await %s({ zone_id: \"z9\" })).text, tools.length > %d);\n", lastZone, lastZone, apiScaleTools)},
		{"namespace import", fmt.Sprintf("import * as z from \"zones\";\nconsole.log((await z.%s({ zone_id: \"z9\" })).text, z.tools.length > %d);\n", lastZone, apiScaleTools)},
	}
	for _, p := range programs {
		var run struct {
			ExitCode int    `json:"exit_code"`
			Stdout   string `json:"stdout"`
			Stderr   string `json:"stderr"`
		}
		s.call(t, ctx, "omni_execute", map[string]any{"code": p.code}, &run)
		if want := fmt.Sprintf("get_zone_%d z9 true\n", apiScaleTools-1); run.ExitCode != 0 || !strings.HasSuffix(run.Stdout, want) {
			t.Errorf("program with %s: exit %d, stdout %q (want %q), stderr:\n%s", p.name, run.ExitCode, run.Stdout, want, run.Stderr)
		}
	}
}

// typeCheck runs tsc --strict over the files, written into one folder.
func typeCheck(t testing.TB, files map[string]string) {
	t.Helper()
	tsc, err := exec.LookPath("tsc")
	if err != nil {
		tsc = filepath.Join(repoRoot(t), ".tools", "node_modules", ".bin", "tsc")
		if _, err := os.Stat(tsc); err != nil {
			t.Fatalf("tsc is required by this test (`just deps` installs it into .tools/): %v", err)
		}
	}
	dir := t.TempDir()
	var names []string
	for name, text := range files {
		names = append(names, name)
		writeFile(t, dir, name, text)
	}
	slices.Sort(names)
	config, _ := json.Marshal(map[string]any{
		"compilerOptions": map[string]any{"strict": true, "noEmit": true, "target": "es2022", "module": "preserve",
			"moduleResolution": "bundler", "types": []string{}},
		"files": names,
	})
	writeFile(t, dir, "tsconfig.json", string(config))
	if out, err := exec.Command(tsc, "-p", filepath.Join(dir, "tsconfig.json")).CombinedOutput(); err != nil {
		t.Fatalf("tsc --strict rejects the hits' declarations: %v\n%s\n%s", err, out, files["zones.d.ts"])
	}
}
