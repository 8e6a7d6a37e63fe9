package omnidev

import (
	"os/exec"
	"strings"
	"testing"
)

// TestJustServeInstallsWhatServingNeeds reads what `just serve` would run
// (just --dry-run): it installs the runtime programs run on, and none of the
// tools only the tests use, which someone who wants to serve would wait for
// and never use.
func TestJustServeInstallsWhatServingNeeds(t *testing.T) {
	if _, err := exec.LookPath("just"); err != nil {
		t.Fatal("just is not on PATH: `npx --yes rust-just test` runs the tests with it, and CI installs it")
	}
	dryRun := func(recipe string) string {
		t.Helper()
		out, err := exec.CommandContext(t.Context(), "just", "--dry-run", recipe).CombinedOutput()
		if err != nil {
			t.Fatalf("just --dry-run %s: %v\n%s", recipe, err, out)
		}
		return string(out)
	}
	testOnly := []string{"typescript", "@types/node", "server-everything", "server-memory", "inspector"}
	serve := dryRun("serve")
	if !strings.Contains(serve, "npm install --prefix .tools --no-audit --no-fund --loglevel=error bun ") {
		t.Errorf("just serve does not install Bun when it is missing:\n%s", serve)
	}
	for _, tool := range testOnly {
		if strings.Contains(serve, tool) {
			t.Errorf("just serve installs %s, which only the tests use:\n%s", tool, serve)
		}
	}
	// The tests still get everything they run.
	test := dryRun("test")
	for _, pkg := range []string{"bun", "typescript@", "@modelcontextprotocol/server-everything", "@modelcontextprotocol/server-memory"} {
		if !strings.Contains(test, "--loglevel=error "+pkg) {
			t.Errorf("just test no longer installs %s:\n%s", pkg, test)
		}
	}
}
