package execute

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLookupRuntimeInRepository: a runtime installed with `npm install -D`
// is found in the repository's node_modules/.bin, after the PATH; a missing
// one names both places and both installs.
func TestLookupRuntimeInRepository(t *testing.T) {
	fake := func(dir string) string {
		t.Helper()
		p := filepath.Join(dir, "bun")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	root := t.TempDir()
	empty := []string{"PATH=" + t.TempDir()}

	_, err := LookupRuntime(root, "bun", nil, empty)
	for _, want := range []string{filepath.Join(root, "node_modules", ".bin"), "`npm install -D bun`", "`npm install -g bun`"} {
		if !errors.Is(err, ErrRuntimeNotFound) || !strings.Contains(err.Error(), want) {
			t.Errorf("missing: error %v, want ErrRuntimeNotFound naming %s", err, want)
		}
	}

	local := fake(filepath.Join(root, "node_modules", ".bin"))
	for _, tt := range []struct {
		name    string
		command []string
	}{
		{"preset", nil},
		{"explicit command", []string{"bun", "run"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got, err := LookupRuntime(root, "bun", tt.command, empty); err != nil || got != local {
				t.Errorf("LookupRuntime = %q, %v; want %q", got, err, local)
			}
		})
	}
	onPath := fake(t.TempDir())
	if got, err := LookupRuntime(root, "bun", nil, []string{"PATH=" + filepath.Dir(onPath)}); err != nil || got != onPath {
		t.Errorf("with bun on PATH too: %q, %v; want the PATH's %q", got, err, onPath)
	}
	if got := RuntimePackage("node", nil); got != "tsx" {
		t.Errorf("RuntimePackage(node) = %q, want tsx", got)
	}
}
