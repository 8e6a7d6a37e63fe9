package tsgen

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/omnidev/omnidev/internal/capability"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// fixtureTools reads testdata/tools.json; schemas are JSON objects there.
func fixtureTools(t *testing.T) []capability.Tool {
	return readTools(t, "testdata/tools.json")
}

// readTools reads a list of tools as tools/list gives them.
func readTools(t *testing.T, path string) []capability.Tool {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var raw []struct {
		Name, Title, Description  string
		InputSchema, OutputSchema json.RawMessage
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	tools := make([]capability.Tool, len(raw))
	for i, r := range raw {
		tools[i] = capability.Tool{Name: r.Name, Title: r.Title, Description: r.Description, InputSchema: r.InputSchema, OutputSchema: r.OutputSchema}
	}
	return tools
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs (go test -update rewrites it); got:\n%s", name, got)
	}
}

func TestDeclarationGolden(t *testing.T) {
	golden(t, "fixture.d.ts.golden", Declaration("fixture", fixtureTools(t)))
}

// schemaFixtures are the tools of testdata/schemas/<module>.json: servers'
// tools/list answers as they are, and hand-written ones in the styles of
// pydantic and zod-to-json-schema.
func schemaFixtures(t *testing.T) map[string][]capability.Tool {
	t.Helper()
	paths, err := filepath.Glob("testdata/schemas/*.json")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no testdata/schemas/*.json: %v", err)
	}
	out := map[string][]capability.Tool{}
	for _, p := range paths {
		out[strings.TrimSuffix(filepath.Base(p), ".json")] = readTools(t, p)
	}
	return out
}

func TestDeclarationSchemasGolden(t *testing.T) {
	for module, tools := range schemaFixtures(t) {
		t.Run(module, func(t *testing.T) {
			golden(t, filepath.Join("schemas", module+".d.ts.golden"), Declaration(module, tools))
		})
	}
}

func TestModuleGolden(t *testing.T) {
	golden(t, "fixture.js.golden", Module("fixture", fixtureTools(t)))
	golden(t, "fixture.tools.json.golden", ToolList(fixtureTools(t)))
}

func TestIdentifier(t *testing.T) {
	tests := []struct{ name, want string }{
		{"get-sum", "getSum"},
		{"get_sum", "getSum"},
		{"getSum", "getSum"},
		{"GetSum", "getSum"},
		{"HTTP_GET", "httpGet"},
		{"read.file v2", "readFileV2"},
		{"3d", "_3d"},
		{"delete", "delete_"},
		{"call", "call_"},
		{"tools", "tools_"},
		{"%%", "tool"},
		{"héllo-wörld", "hLloWRld"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Identifier(tt.name); got != tt.want {
				t.Errorf("Identifier(%q) = %q, want %q", tt.name, got, tt.want)
			}
		})
	}
}

func TestIdentifiersCollisions(t *testing.T) {
	tests := []struct {
		name  string
		tools []string
		want  []string
	}{
		{"the exact name keeps it", []string{"get-sum", "getSum", "get_sum"}, []string{"getSum_2", "getSum", "getSum_3"}},
		{"else the first by name", []string{"get_sum", "get-sum"}, []string{"getSum_2", "getSum"}},
		{"the others by name", []string{"a_b", "aB", "a-b"}, []string{"aB_3", "aB", "aB_2"}},
		{"order of listing does not matter", []string{"a_b", "a-b"}, []string{"aB_2", "aB"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tools := make([]capability.Tool, len(tt.tools))
			for i, n := range tt.tools {
				tools[i].Name = n
			}
			got := Identifiers(tools)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Identifiers(%q) = %q, want %q", tt.tools, got, tt.want)
			}
		})
	}
}

// TestModuleFor: a module for named imports exports call, the functions
// named and tools only when named; names it would not export are left for
// the runtime to report.
func TestModuleFor(t *testing.T) {
	tools := apiTools(50)
	tests := []struct {
		name          string
		imported      []string
		want, notWant []string
	}{
		{"functions", []string{"getZone49", "getZone3", "notATool"},
			[]string{"export function call(", "export function getZone49(", `return call("get_zone_49", args);`, "export function getZone3("},
			[]string{"export const tools", "export function getZone4(", "notATool"}},
		{"tools", []string{"tools"},
			[]string{"export function call(", "export const tools"},
			[]string{"export function getZone"}},
		{"nothing", []string{},
			[]string{"export function call("},
			[]string{"export const tools", "export function getZone"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ModuleFor("zones", tools, tt.imported)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("%q missing", w)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(got, w) {
					t.Errorf("%q present", w)
				}
			}
		})
	}
	if got, want := ModuleFor("zones", tools, nil), Module("zones", tools); got != want {
		t.Errorf("ModuleFor(nil) differs from Module")
	}
}
