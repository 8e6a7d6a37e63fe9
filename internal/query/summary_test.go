package query

import (
	"reflect"
	"testing"

	"github.com/omnidev/omnidev/internal/capability"
)

// TestSummaryListsEverything checks what an empty query tells about each
// capability beyond its description: skills and rules one line each,
// missing type definitions, and the error of one that cannot run.
func TestSummaryListsEverything(t *testing.T) {
	reg := &capability.Registry{
		Root: "/repo",
		Capabilities: []*capability.Capability{
			{
				ID: "tasks", Module: "tasks", Name: "Tasks", Description: "Track tasks", Entry: "index.ts",
				Types:  "export function add(t: string): void;\n",
				Skills: []capability.Skill{{Name: "triage", Description: "Sort new\ntasks by   urgency"}},
				Rules:  []capability.Doc{{Name: "hygiene", Title: "One action per task"}, {Name: "naming", Title: "naming"}},
			},
			{ID: "untyped", Module: "untyped", Entry: "index.ts"},
			{ID: "docs-only", Module: "docs-only"},
		},
		Unavailable: []*capability.Capability{{ID: "gh", Module: "github", Entry: "index.ts",
			Error: "required environment variable GH_TOKEN is not set; set it in the environment or in .omni/.env"}},
	}
	x := openFixture(t, reg)
	res, err := x.Search(t.Context(), Request{})
	if err != nil {
		t.Fatal(err)
	}
	want := []CapabilitySummary{
		{ID: "docs-only", Module: "docs-only"},
		{ID: "gh", Module: "github", Error: "required environment variable GH_TOKEN is not set; set it in the environment or in .omni/.env"},
		{ID: "tasks", Module: "tasks", Name: "Tasks", Description: "Track tasks", Functions: 1,
			Skills: []string{"triage: Sort new tasks by urgency"},
			Rules:  []string{"hygiene: One action per task", "naming: naming"}},
		{ID: "untyped", Module: "untyped", NoTypes: true},
	}
	if !reflect.DeepEqual(res.Summary, want) {
		t.Errorf("summary =\n%+v\nwant\n%+v", res.Summary, want)
	}
	if want := TypeDefinitions(reg.Capabilities); res.TypeDefinitions != want {
		t.Errorf("type definitions include a capability that cannot run:\n%s", res.TypeDefinitions)
	}
	if res, _ := x.Search(t.Context(), Request{Query: "github"}); res.Total != 0 {
		t.Errorf("a capability that cannot run is indexed: %+v", res.Results)
	}
}
