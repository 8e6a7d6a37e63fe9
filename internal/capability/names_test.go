package capability

import (
	"strings"
	"testing"
)

func TestValidateID(t *testing.T) {
	tests := []struct {
		id      string
		wantErr string // "" for a valid id
	}{
		{id: "tasks"},
		{id: "a"},
		{id: "code-review"},
		{id: "k8s-2"},
		{id: "a" + strings.Repeat("b", 63)},
		{id: "", wantErr: "empty"},
		{id: "a" + strings.Repeat("b", 64), wantErr: "longer than 64"},
		{id: "Tasks", wantErr: "lowercase letter"},
		{id: "1tasks", wantErr: "lowercase letter"},
		{id: "-tasks", wantErr: "lowercase letter"},
		{id: "my_tasks", wantErr: "lowercase letter"},
		{id: "../etc", wantErr: "lowercase letter"},
		{id: "a/b", wantErr: "lowercase letter"},
		{id: "tâches", wantErr: "lowercase letter"},
		{id: "omnidev", wantErr: "reserved for omnidev's built-in module"},
		{id: "omnidev-runs"},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			checkErr(t, ValidateID(tt.id), tt.wantErr)
		})
	}
}

func TestValidateModule(t *testing.T) {
	tests := []struct {
		name    string
		wantErr string
	}{
		{name: "tasks"},
		{name: "code-review"},
		{name: "Tasks"},
		{name: "my_module.v2"},
		{name: "fsx"},
		{name: "", wantErr: "empty"},
		{name: "fs", wantErr: "reserved"},
		{name: "child_process", wantErr: "reserved"},
		{name: "path", wantErr: "reserved"},
		{name: "worker_threads", wantErr: "reserved"},
		{name: "bun", wantErr: "reserved"},
		{name: "test", wantErr: "reserved"},
		{name: "node:fs", wantErr: "reserved"},
		{name: "node:anything", wantErr: "reserved"},
		{name: "bun:sqlite", wantErr: "reserved"},
		{name: "omnidev", wantErr: "reserved for omnidev's built-in module"},
		{name: "../x", wantErr: "is a path"},
		{name: "a/b", wantErr: "is a path"},
		{name: "@scope/pkg", wantErr: "is a path"},
		{name: `a\b`, wantErr: "is a path"},
		{name: ".hidden", wantErr: "is a path"},
		{name: "a..b", wantErr: "is a path"},
		{name: "..", wantErr: "is a path"},
		{name: "a b", wantErr: "whitespace"},
		{name: "tab\there", wantErr: "whitespace"},
		{name: "nl\n", wantErr: "whitespace"},
		{name: "nul\x00", wantErr: "control"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkErr(t, ValidateModule(tt.name), tt.wantErr)
		})
	}
}

func TestValidEnvName(t *testing.T) {
	for name, want := range map[string]bool{
		"PATH": true, "_x": true, "GITHUB_TOKEN": true, "a1": true,
		"": false, "1A": false, "A-B": false, "A=B": false, "A B": false, "É": false,
	} {
		if got := validEnvName(name); got != want {
			t.Errorf("validEnvName(%q) = %v, want %v", name, got, want)
		}
	}
}

// checkErr fails unless err is nil when wantErr is "", or contains wantErr.
func checkErr(t *testing.T, err error, wantErr string) {
	t.Helper()
	switch {
	case wantErr == "" && err != nil:
		t.Fatalf("unexpected error: %v", err)
	case wantErr != "" && err == nil:
		t.Fatalf("no error, want one containing %q", wantErr)
	case wantErr != "" && !strings.Contains(err.Error(), wantErr):
		t.Fatalf("error %q does not contain %q", err, wantErr)
	}
}
