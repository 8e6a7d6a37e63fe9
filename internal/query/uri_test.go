package query

import (
	"testing"

	"github.com/omnidev/omnidev/internal/capability"
)

func TestHitURI(t *testing.T) {
	const dir = "omni/capabilities/tasks/"
	withDef := &capability.Capability{
		ID: "tasks", Types: "export {}",
		Docs:   []capability.Doc{{Name: "definition", Path: dir + "definition.md"}, {Name: "guide/setup", Path: dir + "docs/guide/setup.md"}},
		Rules:  []capability.Doc{{Name: "naming", Path: dir + "rules/naming.md"}},
		Skills: []capability.Skill{{Name: "plan-work", Path: dir + "skills/plan/SKILL.md"}},
	}
	typesOnly := &capability.Capability{ID: "tasks", Types: "export {}"}
	wrapped := &capability.Capability{ID: "zones", MCP: &capability.MCPServer{Command: "zones-server"}, Types: "export {}"}
	tests := []struct {
		name      string
		c         *capability.Capability
		kind, doc string
		want      string
	}{
		{"capability with definition.md", withDef, KindCapability, "tasks", "omni://tasks/definition.md"},
		{"capability with only types", typesOnly, KindCapability, "tasks", "omni://tasks/types.d.ts"},
		{"capability with neither", &capability.Capability{ID: "tasks"}, KindCapability, "tasks", ""},
		{"skill, by its folder", withDef, KindSkill, "plan-work", "omni://tasks/skills/plan/SKILL.md"},
		{"nested doc", withDef, KindDoc, "guide/setup", "omni://tasks/docs/guide/setup.md"},
		{"definition doc", withDef, KindDoc, "definition", "omni://tasks/definition.md"},
		{"rule", withDef, KindRule, "naming", "omni://tasks/rules/naming.md"},
		{"rule not found", withDef, KindRule, "guide/setup", ""},
		{"no capability", nil, KindDoc, "definition", ""},
		{"tool of a wrapped server", wrapped, KindTool, "get_zone_7", "omni://zones/tools/get_zone_7.d.ts"},
		{"tool named with a dot", wrapped, KindTool, "zone.get", "omni://zones/tools/zone.get.d.ts"},
		{"tool named as no path can be", wrapped, KindTool, "a/../b", ""},
		{"tool named with a backslash", wrapped, KindTool, `a\b`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := hitURI(tt.c, tt.kind, tt.doc); got != tt.want {
				t.Errorf("hitURI = %q, want %q", got, tt.want)
			}
		})
	}
}
