package server_test

import (
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestEndToEndConfigWarnings: a config problem reaches the agent in every
// omni_query and omni_execute result, naming file and line, and the CLI
// prints it on stderr; so does a reload that failed, while the last good
// state is served.
func TestEndToEndConfigWarnings(t *testing.T) {
	root := fixtureRepo(t)
	writeFile(t, root, "omni/config.toml", "project = \"x\"\n\n[capabilites]\nenable = [\"tasks\"]\n")
	s := startServer(t, root)
	const want = "omni/config.toml:3: unknown table capabilites"
	type warned struct {
		Warnings []string `json:"warnings"`
	}
	has := func(ws []string, want string) bool {
		for _, w := range ws {
			if strings.Contains(w, want) {
				return true
			}
		}
		return false
	}
	var q, x warned
	s.call(t, t.Context(), "omni_query", map[string]any{"query": "task"}, &q)
	s.call(t, t.Context(), "omni_execute", map[string]any{"code": `import { listTasks } from "tasks";`}, &x)
	if !has(q.Warnings, want) || !has(x.Warnings, want) {
		t.Errorf("warnings: omni_query %q, omni_execute %q; want %q in both", q.Warnings, x.Warnings, want)
	}
	for _, args := range [][]string{{"query", "task"}, {"exec", "-"}} {
		cmd := exec.Command(binary, append([]string{"--dir", root}, args...)...)
		cmd.Stdin = strings.NewReader(`console.log("hi");`)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		cmd.Run()
		if !strings.Contains(stderr.String(), "omnidev: warning: "+want) {
			t.Errorf("omnidev %v: stderr lacks the warning:\n%s", args, stderr.String())
		}
	}

	// A reload that fails is said until one succeeds.
	writeFile(t, root, "omni/config.toml", "project = \"x\n[capabilities]\nenable = [\"tasks\"]\n")
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.call(t, t.Context(), "omni_query", map[string]any{}, &q)
		if has(q.Warnings, "keeping the last good configuration") && has(q.Warnings, "omni/config.toml") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no warning of the failed reload: %q", q.Warnings)
		}
		time.Sleep(100 * time.Millisecond)
	}
	writeFile(t, root, "omni/config.toml", "project = \"x\"\n[capabilities]\nenable = [\"tasks\"]\n")
	deadline = time.Now().Add(10 * time.Second)
	for {
		q.Warnings = nil
		s.call(t, t.Context(), "omni_query", map[string]any{}, &q)
		if len(q.Warnings) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("warnings after the config was fixed: %q", q.Warnings)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
