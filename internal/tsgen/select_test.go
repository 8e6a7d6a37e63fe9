package tsgen

import (
	"strings"
	"testing"
)

// TestSelect: the declarations of a few tools carry each named type they
// reach once, those another tool declared first included, and nothing of
// the other tools.
func TestSelect(t *testing.T) {
	ts := Generate("m", caseTools([]string{
		`{"type":"object","properties":{"n":{"$ref":"#/$defs/Node"}},"$defs":{"Node":{"type":"object","properties":{"next":{"$ref":"#/$defs/Node"},"v":{"$ref":"#/$defs/V"}}},"V":{"type":"string"}}}`,
		`{"type":"object","properties":{"m":{"type":"array","items":{"$ref":"#/$defs/Node"}}},"required":["m"],"$defs":{"V":{"type":"string"},"Node":{"type":"object","properties":{"v":{"$ref":"#/$defs/V"},"next":{"$ref":"#/$defs/Node"}}}}}`,
		`{"type":"object","properties":{"n":{"$ref":"#/$defs/Node"}},"$defs":{"Node":{"type":"object","properties":{"next":{"$ref":"#/$defs/Node"},"v":{"$ref":"#/$defs/V"}}},"V":{"type":"number"}}}`,
	}))
	tests := []struct {
		name          string
		tools         []string
		want, notWant []string
	}{
		{"a tool whose type another declared", []string{"t2"},
			[]string{"export type Node = {", "export function t2(", "export type ToolResult", "export type ContentItem", "export function call(", "export const tools:"},
			[]string{"export function t(", "export function t3(", "Node_2"}},
		{"each type once, in the order asked", []string{"t3", "t", "t2", "t", "unknown"},
			[]string{"export type Node = {", "export type Node_2 = {", "export function t3(", "export function t(", "export function t2("}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ts.Select(tt.tools)
			for _, w := range tt.want {
				if n := strings.Count(got, w); n != 1 {
					t.Errorf("%q appears %d times, want once, in\n%s", w, n, got)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(got, w) {
					t.Errorf("%q in\n%s", w, got)
				}
			}
			if strings.Index(got, "export function t3(") < strings.Index(got, "export type Node_2") {
				t.Errorf("a function comes before the types:\n%s", got)
			}
		})
	}
	if got := ts.Select([]string{"unknown"}); got != "" {
		t.Errorf("Select(unknown) = %q, want empty", got)
	}
}

// TestSelectTypeChecks: what Select returns for a few tools of each module
// of TestDeclarationsTypeCheck is valid TypeScript on its own.
func TestSelectTypeChecks(t *testing.T) {
	decls := map[string]string{}
	for name, tools := range randomModules(40, 3) {
		decls[name] = Generate(name, tools).Select([]string{tools[3].Name, tools[1].Name})
	}
	for module, tools := range schemaFixtures(t) {
		decls[module] = Generate(module, tools).Select([]string{tools[len(tools)-1].Name})
	}
	typeCheck(t, decls, map[string]string{"empty.ts": "export {};\n"})
}
