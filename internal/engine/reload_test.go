package engine

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/omnidev/omnidev/internal/capability"
	"github.com/omnidev/omnidev/internal/testrepo"
)

func TestIsReloadTrigger(t *testing.T) {
	for _, tt := range []struct {
		rel  string
		want bool
	}{
		{"omni/config.toml", true},
		{"omni/capabilities/a/index.ts", true},
		{".omni/config.local.toml", true},
		{".omni/.env", true},
		{".omni/active-profile", true},
		{"omni.toml", true},
		{".omni/config.toml", true},
		{".omni/capabilities/a/rules/x.md", true},
		{".omni/sandbox/main.ts", false},
		{".omni/server.pid", false},
		{"src/main.go", false},
		{"omni.toml.bak", false},
	} {
		if got := isReloadTrigger(tt.rel); got != tt.want {
			t.Errorf("isReloadTrigger(%q) = %v, want %v", tt.rel, got, tt.want)
		}
	}
}

// TestWatchOmniDevLayout reloads a repository laid out as OmniDev does:
// omni.toml at the root, capabilities in .omni/capabilities.
func TestWatchOmniDevLayout(t *testing.T) {
	root := t.TempDir()
	manifest := func(id string) string { return "[capability]\nid = \"" + id + "\"\n" }
	testrepo.WriteFiles(t, root, map[string]string{
		"omni.toml":                            "[profiles.default]\ncapabilities = [\"a\"]\n",
		".omni/capabilities/a/capability.toml": manifest("a"),
		"src/app.ts":                           "export {};\n",
	})
	e, err := Open(t.Context(), root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if got := e.Registry().Layout.Config; got != "omni.toml" {
		t.Fatalf("Layout.Config = %q", got)
	}
	w, err := e.Watch(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()

	testrepo.WriteFiles(t, root, map[string]string{".omni/capabilities/b/capability.toml": manifest("b")})
	waitReg(t, e, "b to be listed as not enabled", func(r *capability.Registry) bool { return slices.Equal(r.NotEnabled, []string{"b"}) })
	if err := os.WriteFile(filepath.Join(root, "omni.toml"), []byte("[profiles.default]\ncapabilities = [\"a\", \"b\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitReg(t, e, "b to be enabled", func(r *capability.Registry) bool { return len(r.Capabilities) == 2 })
}

func waitReg(t *testing.T, e *Engine, what string, cond func(*capability.Registry) bool) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if cond(e.Registry()) {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}
