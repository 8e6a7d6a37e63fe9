package query

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/omnidev/omnidev/internal/capability"
	"github.com/omnidev/omnidev/internal/tsgen"
)

// apiTools returns n tools shaped like those of a big API's server:
// get_zone_<i>, a sentence of description, four parameters.
func apiTools(n int) []capability.Tool {
	tools := make([]capability.Tool, n)
	for i := range tools {
		tools[i] = capability.Tool{
			Name:        fmt.Sprintf("get_zone_%d", i),
			Description: fmt.Sprintf("Returns the settings and status of a zone of shard %d of the account, optionally with its DNS records.", i),
			InputSchema: json.RawMessage(`{"type":"object","properties":{"zone_id":{"type":"string","description":"The zone's identifier."},"include_records":{"type":"boolean"},"page":{"type":"integer"},"fields":{"type":"array","items":{"type":"string"}}},"required":["zone_id"]}`),
		}
	}
	return tools
}

// scaleFixture adds to fixture() a wrapped server with n API-shaped tools
// and a hand-written capability whose types.d.ts is past SmallTypes.
func scaleFixture(n int) *capability.Registry {
	reg := fixture()
	zones := (&capability.Capability{
		ID: "zones", Module: "zones", Description: "Zones of the account",
		MCP: &capability.MCPServer{Transport: capability.TransportStdio, Command: "zones-server"},
	}).WithTools(apiTools(n), "")
	zones.Types = tsgen.Declaration("zones", zones.Tools)
	var big strings.Builder
	for i := range 400 {
		fmt.Fprintf(&big, "/** Renders chart %d. */\nexport function chart%d(data: number[]): string;\n", i, i)
	}
	charts := &capability.Capability{ID: "charts", Module: "charts", Description: "Charts", Entry: "index.ts", Types: big.String()}
	reg.Capabilities = append([]*capability.Capability{charts}, append(reg.Capabilities, zones)...)
	return reg
}

// TestTypesAtScale: an empty query and a 3-hit include_types answer stay
// small however many tools a wrapped server has, say where the rest is, and
// the small hand-written types still come whole.
func TestTypesAtScale(t *testing.T) {
	reg := scaleFixture(1000)
	x := openFixture(t, reg)
	byID := map[string]*capability.Capability{}
	for _, c := range reg.Capabilities {
		byID[c.ID] = c
	}

	empty, err := x.Search(t.Context(), Request{})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(empty)
	if len(data) > TypesBudget+8_000 {
		t.Errorf("empty query is %d bytes, want at most the types budget (%d) and the summary", len(data), TypesBudget)
	}
	for _, id := range []string{"database", "deploy", "tasks"} {
		if want := TypeDefinitions([]*capability.Capability{byID[id]}); !strings.Contains(empty.TypeDefinitions, want) {
			t.Errorf("the small types of %s are not whole in the empty query:\n%s", id, empty.TypeDefinitions)
		}
	}
	summary := map[string]CapabilitySummary{}
	for _, s := range empty.Summary {
		summary[s.ID] = s
	}
	if s := summary["zones"]; s.Functions != 1000 || !strings.Contains(s.TypesNote, "omni://zones/types.d.ts") || strings.Contains(empty.TypeDefinitions, "'zones'") {
		t.Errorf("zones in the empty query: %+v, its types included: %v", s, strings.Contains(empty.TypeDefinitions, "'zones'"))
	}
	if s := summary["charts"]; s.Functions != 400 || !strings.Contains(s.TypesNote, "omni://charts/types.d.ts") {
		t.Errorf("charts in the empty query: %+v", s)
	}
	if s := summary["database"]; s.TypesNote != "" {
		t.Errorf("database has a types note though its types are there: %q", s.TypesNote)
	}

	res, err := x.Search(t.Context(), Request{Query: "zone shard 7 account", Kinds: []string{KindTool}, Limit: 3, IncludeTypes: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Results) != 3 {
		t.Fatalf("%d hits, want 3", len(res.Results))
	}
	data, _ = json.Marshal(res)
	if len(data) > 6_000 {
		t.Errorf("3-hit include_types answer is %d bytes:\n%s", len(data), data)
	}
	for _, h := range res.Results {
		fn := tsgen.Identifier(h.Name)
		if n := strings.Count(res.TypeDefinitions, "export function "+fn+"("); n != 1 {
			t.Errorf("%s declared %d times in\n%s", fn, n, res.TypeDefinitions)
		}
	}
	for _, once := range []string{"export type ContentItem", "export type ToolResult", "declare module 'zones'"} {
		if n := strings.Count(res.TypeDefinitions, once); n != 1 {
			t.Errorf("%q %d times in\n%s", once, n, res.TypeDefinitions)
		}
	}
	if len(res.Summary) != 1 || !strings.HasPrefix(res.Summary[0].TypesNote, "declared here: the 3 tools found") {
		t.Errorf("summary %+v", res.Summary)
	}

	// A hit of a capability whose types are past SmallTypes says where
	// they are; a small one's come whole, as before.
	res, err = x.Search(t.Context(), Request{Query: "charts database", Kinds: []string{KindCapability}, IncludeTypes: true})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.TypeDefinitions, "'charts'") || !strings.Contains(res.TypeDefinitions, TypeDefinitions([]*capability.Capability{byID["database"]})) {
		t.Errorf("type definitions:\n%s", res.TypeDefinitions)
	}
}

// BenchmarkSearchAPIScale: a 3-hit include_types search of the tools of a
// wrapped server with 10,000 API-shaped tools, whose words stand in every
// tool (the worst case: every tool is scored).
func BenchmarkSearchAPIScale(b *testing.B) {
	x := openFixture(b, scaleFixture(10_000))
	i := 0
	for b.Loop() {
		req := Request{Query: fmt.Sprintf("zone shard %d records", i*197%10_000), Kinds: []string{KindTool}, Limit: 3, IncludeTypes: true}
		if _, err := x.Search(b.Context(), req); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
