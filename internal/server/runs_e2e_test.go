package server_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestEndToEndRunDiff: a run that changes a file is listed as a resource,
// omni://runs/<id>/diff, whose text is the run's diff.
func TestEndToEndRunDiff(t *testing.T) {
	root := fixtureRepo(t)
	s := startServer(t, root)
	ctx := t.Context()

	var out struct {
		RunID string `json:"run_id"`
	}
	s.call(t, ctx, "omni_execute", map[string]any{"code": `await Bun.write("README.md", "# fixture\n\nline 2\n");`}, &out)
	if out.RunID == "" {
		t.Fatal("no run_id")
	}
	uri := "omni://runs/" + out.RunID + "/diff"
	list, err := s.session.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var listed *mcp.Resource
	for _, r := range list.Resources {
		if r.URI == uri {
			listed = r
		}
	}
	if listed == nil || listed.MIMEType != "text/x-diff" {
		t.Fatalf("resources/list has no %s with mimeType text/x-diff: %+v", uri, listed)
	}
	res, err := s.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatal(err)
	}
	if text := res.Contents[0].Text; !strings.Contains(text, "-line two\n+line 2\n") || res.Contents[0].MIMEType != "text/x-diff" {
		t.Errorf("diff = %q (%s)", text, res.Contents[0].MIMEType)
	}
	_, err = s.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: "omni://runs/nope/diff"})
	wantInvalidParams(t, err, "no run nope is kept")
}

// TestEndToEndRunDiffDuringRun: a run's diff is read while another run is
// in progress, without waiting for it: the second run ends only once the
// test has read the diff (it waits for a file the test then writes).
func TestEndToEndRunDiffDuringRun(t *testing.T) {
	root := fixtureRepo(t)
	s := startServer(t, root)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var first struct {
		RunID string `json:"run_id"`
	}
	s.call(t, ctx, "omni_execute", map[string]any{"code": `await Bun.write("README.md", "# fixture\n\nline 2\n");`}, &first)
	started := filepath.Join(root, "started")
	type ended struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan ended, 1)
	go func() {
		res, err := s.session.CallTool(ctx, &mcp.CallToolParams{Name: "omni_execute", Arguments: map[string]any{
			"timeout_ms": 20_000,
			"code": `import { existsSync, writeFileSync } from "node:fs";
writeFileSync("started", "");
while (!existsSync("go")) await Bun.sleep(20);`,
		}})
		done <- ended{res, err}
	}()
	for {
		if _, err := os.Stat(started); err == nil {
			break
		}
		select {
		case e := <-done:
			t.Fatalf("the second run ended before it started: %v", e.err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	res, err := s.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: "omni://runs/" + first.RunID + "/diff"})
	if err != nil {
		t.Fatalf("read the diff during a run: %v", err)
	}
	if !strings.Contains(res.Contents[0].Text, "+line 2") {
		t.Errorf("diff = %q", res.Contents[0].Text)
	}
	if err := os.WriteFile(filepath.Join(root, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	e := <-done
	if e.err != nil {
		t.Fatal(e.err)
	}
	// Had the read waited for the run, the run would have ended by its
	// timeout first.
	var out struct {
		ExitCode int  `json:"exit_code"`
		TimedOut bool `json:"timed_out"`
	}
	data, _ := json.Marshal(e.res.StructuredContent)
	if err := json.Unmarshal(data, &out); err != nil || out.ExitCode != 0 || out.TimedOut {
		t.Errorf("the second run: %s", data)
	}
}
