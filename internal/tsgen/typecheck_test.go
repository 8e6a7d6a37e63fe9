package tsgen

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/omnidev/omnidev/internal/capability"
)

// tsc returns the TypeScript compiler: on PATH, or in the repository's
// .tools/ where `just deps` installs it. CI installs it, so its absence is
// a failure, never a skip.
func tsc(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("tsc"); err == nil {
		return p
	}
	p, err := filepath.Abs(filepath.Join("..", "..", ".tools", "node_modules", ".bin", "tsc"))
	if err == nil {
		if _, err = os.Stat(p); err == nil {
			return p
		}
	}
	t.Fatalf("tsc is required by this test (`just deps` installs it into .tools/): %v", err)
	return ""
}

// typeCheck runs tsc --strict over the declaration of each module and the
// program files given, all written into one folder.
func typeCheck(t *testing.T, decls map[string]string, programs map[string]string) {
	t.Helper()
	dir := t.TempDir()
	var files []string
	for name, text := range decls {
		files = append(files, name+".d.ts")
		if err := os.WriteFile(filepath.Join(dir, name+".d.ts"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, text := range programs {
		files = append(files, name)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(files)
	config := map[string]any{
		"compilerOptions": map[string]any{
			"strict": true, "noEmit": true, "target": "es2022", "module": "preserve",
			"moduleResolution": "bundler", "types": []string{}, "skipLibCheck": false,
		},
		"files": files,
	}
	data, _ := json.MarshalIndent(config, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, "tsconfig.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), tsc(t), "-p", filepath.Join(dir, "tsconfig.json"))
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		var listing strings.Builder
		for _, name := range slices.Sorted(maps.Keys(decls)) {
			if !strings.Contains(string(out), name+".d.ts(") {
				continue
			}
			listing.WriteString("// " + name + ".d.ts\n" + numbered(decls[name]))
		}
		t.Fatalf("tsc --strict rejects the declarations: %v\n%s\n%s", err, out, listing.String())
	}
}

// numbered prefixes each line with its number, as tsc's messages cite them.
func numbered(text string) string {
	var b strings.Builder
	for i, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		fmt.Fprintf(&b, "%4d  %s\n", i+1, l)
	}
	return b.String()
}

// TestDeclarationsTypeCheck: the declarations generated from every fixture
// (real servers' tools, pydantic and zod styles, the cases of
// TestSchemaTypes) are valid TypeScript, and typed precisely enough that
// testdata/typecheck/check.ts compiles, with each mistake it marks
// @ts-expect-error rejected.
func TestDeclarationsTypeCheck(t *testing.T) {
	decls := map[string]string{"fixture": Declaration("fixture", fixtureTools(t))}
	for module, tools := range schemaFixtures(t) {
		decls[module] = Declaration(module, tools)
	}
	for i, tt := range schemaCases {
		decls["case"+strconv.Itoa(i)] = Declaration("case"+strconv.Itoa(i), caseTools(tt.tools))
	}
	program, err := os.ReadFile("testdata/typecheck/check.ts")
	if err != nil {
		t.Fatal(err)
	}
	typeCheck(t, decls, map[string]string{"check.ts": string(program)})
}

// caseTools turns input schemas into tools t, t2, t3...
func caseTools(inputs []string) []capability.Tool {
	tools := make([]capability.Tool, len(inputs))
	for i, in := range inputs {
		tools[i] = capability.Tool{Name: "t", InputSchema: json.RawMessage(in)}
		if i > 0 {
			tools[i].Name = "t" + strconv.Itoa(i+1)
		}
	}
	return tools
}
