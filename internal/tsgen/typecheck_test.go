package tsgen

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
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
// TestSchemaTypes, and random schemas full of recursion) are valid
// TypeScript, and typed precisely enough that
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
	for name, tools := range randomModules(100, 1) {
		decls[name] = Declaration(name, tools)
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

// randomModules returns n modules of four tools each, whose schemas mix
// every construct the generator knows, with $refs (recursive or not) into
// definitions, properties and items, names that need quoting and
// descriptions that try to end their comment. The same seed gives the same
// schemas (seeds 1 to 40 of 200 modules each pass).
func randomModules(n int, seed uint64) map[string][]capability.Tool {
	r := rand.New(rand.NewPCG(seed, 2))
	refs := []string{"#", "#/$defs/Node", "#/$defs/x~1y", "#/$defs/__schema0", "#/$defs/call", "#/$defs/ContentItem",
		"#/properties/a", "#/properties/a/items", "#/$defs/Node/properties/a"}
	defs := []string{"Node", "x/y", "__schema0", "call", "ContentItem"}
	modules := map[string][]capability.Tool{}
	for m := range n {
		var tools []capability.Tool
		for k := range 4 {
			d := map[string]any{}
			for _, name := range defs {
				d[name] = randomSchema(r, 1, refs)
			}
			root := randomSchema(r, 0, refs)
			if obj, ok := root.(map[string]any); ok {
				obj["$defs"] = d
			}
			data, _ := json.Marshal(root)
			tools = append(tools, capability.Tool{Name: "tool" + strconv.Itoa(k), InputSchema: data, OutputSchema: data})
		}
		modules["random"+strconv.Itoa(m)] = tools
	}
	return modules
}

func randomSchema(r *rand.Rand, depth int, refs []string) any {
	sub := func() any { return randomSchema(r, depth+1, refs) }
	if depth > 4 || r.IntN(6) == 0 {
		switch r.IntN(6) {
		case 0:
			return true
		case 1:
			return false
		case 2:
			return map[string]any{"$ref": refs[r.IntN(len(refs))]}
		}
		types := []string{"string", "number", "integer", "boolean", "null"}
		return map[string]any{"type": types[r.IntN(len(types))], "description": "ends */ or \" ) ] } ' `x`"}
	}
	names := []string{"a", "b-c", "d/e", "f~g", "0", "$h", "ü", "constructor", "__proto__", "x y", "*/", "'", "\""}
	switch r.IntN(12) {
	case 0, 1, 2:
		props := map[string]any{}
		var required []any
		for i := r.IntN(4); i >= 0; i-- {
			name := names[r.IntN(len(names))]
			props[name] = sub()
			if r.IntN(2) == 0 {
				required = append(required, name)
			}
		}
		s := map[string]any{"type": "object", "properties": props, "required": required}
		switch r.IntN(4) {
		case 0:
			s["additionalProperties"] = sub()
		case 1:
			s["additionalProperties"] = false
		case 2:
			s["patternProperties"] = map[string]any{"^x": sub()}
		}
		return s
	case 3:
		return map[string]any{"type": "array", "items": sub()}
	case 4:
		return map[string]any{"type": "array", "prefixItems": []any{sub(), sub()}, "minItems": r.IntN(3), "items": sub()}
	case 5:
		return map[string]any{"type": "array", "items": []any{sub()}, "additionalItems": sub(), "maxItems": r.IntN(3)}
	case 6:
		return map[string]any{"anyOf": []any{sub(), sub()}}
	case 7:
		return map[string]any{"allOf": []any{sub(), sub()}, "type": "object"}
	case 8:
		return map[string]any{"enum": []any{"a", 1, true, nil, map[string]any{"k": []any{1}}}}
	case 9:
		return map[string]any{"const": map[string]any{"*/": "x", "q": nil}}
	case 10:
		return map[string]any{"type": []any{"string", "null", "array"}, "items": sub(), "nullable": true}
	}
	return map[string]any{"$ref": refs[r.IntN(len(refs))], "description": "through a $ref"}
}
