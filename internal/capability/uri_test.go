package capability

import (
	"errors"
	"reflect"
	"testing"
)

func TestParseURI(t *testing.T) {
	tests := []struct {
		uri     string
		id, rel string
		wantErr bool
	}{
		{uri: "omni://tasks/definition.md", id: "tasks", rel: "definition.md"},
		{uri: "omni://tasks/docs/guide/setup.md", id: "tasks", rel: "docs/guide/setup.md"},
		{uri: "omni://tasks/docs/guide%2Fsetup.md", id: "tasks", rel: "docs/guide/setup.md"},
		{uri: "omni://tasks/docs/my%20notes.md", id: "tasks", rel: "docs/my notes.md"},
		{uri: "omni://tasks/../repo/definition.md", wantErr: true},
		{uri: "omni://tasks/docs/../../x", wantErr: true},
		{uri: "omni://tasks/%2e%2e/secret", wantErr: true},
		{uri: "omni://tasks/docs/..%2F..%2Fx", wantErr: true},
		{uri: "omni://tasks/docs//x.md", wantErr: true},
		{uri: "omni://tasks/docs/a%5Cb.md", wantErr: true},
		{uri: "omni://tasks", wantErr: true},
		{uri: "omni://tasks/", wantErr: true},
		{uri: "omni://Tasks/definition.md", wantErr: true},
		{uri: "omni://tasks:80/definition.md", wantErr: true},
		{uri: "omni://tasks/definition.md?x=1", wantErr: true},
		{uri: "file:///etc/passwd", wantErr: true},
		{uri: "omni:tasks/definition.md", wantErr: true},
		{uri: "://", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.uri, func(t *testing.T) {
			id, rel, err := ParseURI(tt.uri)
			if tt.wantErr {
				if !errors.Is(err, ErrNotCapabilityFile) {
					t.Errorf("ParseURI = %q, %q, %v; want ErrNotCapabilityFile", id, rel, err)
				}
				return
			}
			if err != nil || id != tt.id || rel != tt.rel {
				t.Errorf("ParseURI = %q, %q, %v; want %q, %q", id, rel, err, tt.id, tt.rel)
			}
			if back := URI(id, rel); back != tt.uri && tt.uri != "omni://tasks/docs/guide%2Fsetup.md" {
				t.Errorf("URI(%q, %q) = %q; want %q", id, rel, back, tt.uri)
			}
		})
	}
}

func TestCapabilityFiles(t *testing.T) {
	reg := loadRepo(t, repoFiles([]string{"tasks"}, map[string]string{
		"tasks/capability.toml":      manifest("tasks", "[exports]", `module = "todo"`),
		"tasks/definition.md":        "# Tasks\n\nTrack **tasks** in a file. More here.\n",
		"tasks/docs/guide/setup.md":  "---\ntitle: x\n---\n# Setup\n\n```sh\n# not a title\n```\n\n| a | b |\n",
		"tasks/rules/naming.md":      "Name tasks with a verb!  Always.\n",
		"tasks/rules/order.md":       "# Order\n\n1. First things first\n2. Then the rest.\n",
		"tasks/skills/plan/SKILL.md": "---\nname: plan-work\ndescription: Plan work\n---\n# Plan\n",
		"tasks/types.d.ts":           "export function add(t: string): void;\n",
	}), nil)
	c := reg.Capabilities[0]
	want := []File{
		{Rel: "definition.md", Title: "Tasks", Description: "Track tasks in a file.", Text: "# Tasks\n\nTrack **tasks** in a file. More here.\n"},
		{Rel: "docs/guide/setup.md", Title: "Setup", Description: "Setup", Text: "---\ntitle: x\n---\n# Setup\n\n```sh\n# not a title\n```\n\n| a | b |\n"},
		{Rel: "rules/naming.md", Title: "naming", Description: "Name tasks with a verb!", Text: "Name tasks with a verb!  Always.\n"},
		{Rel: "rules/order.md", Title: "Order", Description: "First things first", Text: "# Order\n\n1. First things first\n2. Then the rest.\n"},
		{Rel: "skills/plan/SKILL.md", Title: "Plan", Description: "Plan work", Text: "---\nname: plan-work\ndescription: Plan work\n---\n# Plan\n"},
		{Rel: "types.d.ts", Title: "todo type definitions", Description: `The TypeScript declarations of the "todo" module: what a program can import from it.`, Text: "export function add(t: string): void;\n"},
	}
	if got := c.Files(); !reflect.DeepEqual(got, want) {
		t.Errorf("Files() =\n%+v\nwant\n%+v", got, want)
	}
	if got := c.FileURI(c.Skills[0].Path); got != "omni://tasks/skills/plan/SKILL.md" {
		t.Errorf("FileURI = %q", got)
	}
}
