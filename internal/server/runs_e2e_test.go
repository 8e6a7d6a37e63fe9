package server_test

import (
	"strings"
	"testing"

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
