package query

import (
	"testing"

	"github.com/omnidev/omnidev/internal/capability"
)

func TestTypeDefinitions(t *testing.T) {
	tests := []struct {
		name string
		caps []*capability.Capability
		want string
	}{
		{name: "none", caps: nil, want: ""},
		{
			name: "indented, trailing newlines dropped, blank lines kept empty",
			caps: []*capability.Capability{{ID: "tasks", Module: "tasks",
				Types: "export interface Task {\n  id: string;\n}\n\nexport function addTask(title: string): Task;\n\n"}},
			want: "declare module 'tasks' {\n" +
				"  export interface Task {\n" +
				"    id: string;\n" +
				"  }\n" +
				"\n" +
				"  export function addTask(title: string): Task;\n" +
				"}",
		},
		{
			name: "no types",
			caps: []*capability.Capability{{ID: "notes", Module: "notes", Types: " \n"}},
			want: "declare module 'notes' {\n  // No type definitions available\n}",
		},
		{
			name: "several, joined by a blank line; module defaults to the id; CRLF",
			caps: []*capability.Capability{
				{ID: "a", Module: "mod-a", Types: "export const x: number;\r\n"},
				nil,
				{ID: "b"},
			},
			want: "declare module 'mod-a' {\n  export const x: number;\n}\n\n" +
				"declare module 'b' {\n  // No type definitions available\n}",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := TypeDefinitions(tt.caps); got != tt.want {
				t.Errorf("TypeDefinitions() =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}
