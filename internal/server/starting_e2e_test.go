package server_test

import (
	"strings"
	"testing"
)

// TestEndToEndFirstQuerySaysStarting: the agent's first query after start
// says that the wrapped server is starting, rather than showing it without
// tools, and a program that imports it at once waits for it.
func TestEndToEndFirstQuerySaysStarting(t *testing.T) {
	root := wrappedRepo(t)
	s := startServer(t, root)
	var q struct {
		Summary []struct {
			ID       string
			Tools    *int
			Error    string
			Starting bool
		}
		TypeDefinitions string `json:"type_definitions"`
	}
	s.call(t, t.Context(), "omni_query", map[string]any{"include_types": true}, &q)
	if len(q.Summary) != 1 {
		t.Fatalf("summary %+v, want the wrapped server", q.Summary)
	}
	if c := q.Summary[0]; c.Tools == nil || *c.Tools != 0 || !c.Starting || !strings.Contains(c.Error, "starting") {
		t.Errorf("first query: %+v; want it starting, with no tools yet", c)
	}
	if !strings.Contains(q.TypeDefinitions, "No type definitions yet: starting") {
		t.Errorf("type definitions do not say the server is starting:\n%s", q.TypeDefinitions)
	}

	var res struct {
		ExitCode int `json:"exit_code"`
		Stdout   string
		Stderr   string
	}
	code := `import { getSum } from "everything";
console.log((await getSum({ a: 40, b: 2 })).text);`
	s.call(t, t.Context(), "omni_execute", map[string]any{"code": code}, &res)
	if res.ExitCode != 0 || !strings.Contains(res.Stdout, "The sum of 40 and 2 is 42.") {
		t.Errorf("a run at once: exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}
}
