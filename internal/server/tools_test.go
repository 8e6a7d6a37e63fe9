package server

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/omnidev/omnidev/internal/engine"
	"github.com/omnidev/omnidev/internal/testrepo"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestToolsGolden snapshots tools/list — names, descriptions, schemas and
// annotations — so that any change to what agents see is a reviewed diff.
// Rewrite with: go test ./internal/server -run TestToolsGolden -update
func TestToolsGolden(t *testing.T) {
	eng, err := engine.Open(t.Context(), testrepo.CopyOmni(t), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	srv, err := New(eng, "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.MarshalIndent(tools.Tools, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	golden := filepath.Join("testdata", "tools_list.golden.json")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("tools/list changed; review the difference and run with -update if it is intended:\n--- got\n%s\n--- want\n%s", got, want)
	}
}
