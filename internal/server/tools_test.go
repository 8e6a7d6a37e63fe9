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

// connect opens an engine on root (a copy of this repository's omni/ when
// empty), serves it in memory and returns the engine and a connected client.
func connect(t *testing.T, root string, opts *mcp.ClientOptions) (*engine.Engine, *mcp.ClientSession) {
	t.Helper()
	return connectVersion(t, root, opts, "")
}

// connectVersion is connect with the client asking for protocolVersion
// (the latest when empty).
func connectVersion(t *testing.T, root string, opts *mcp.ClientOptions, protocolVersion string) (*engine.Engine, *mcp.ClientSession) {
	t.Helper()
	if root == "" {
		root = testrepo.CopyOmni(t)
	}
	eng, err := engine.Open(t.Context(), root, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	srv, err := New(eng, "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, opts).Connect(t.Context(), ct, &mcp.ClientSessionOptions{ProtocolVersion: protocolVersion})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return eng, cs
}

// checkGolden compares v, as indented JSON, with testdata/<name>, which
// -update rewrites.
func checkGolden(t *testing.T, name string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	golden := filepath.Join("testdata", name)
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
		t.Errorf("%s changed; review the difference and run with -update if it is intended:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// TestToolsGolden snapshots tools/list — names, descriptions, schemas and
// annotations — so that any change to what agents see is a reviewed diff.
// Rewrite with: go test ./internal/server -run TestToolsGolden -update
func TestToolsGolden(t *testing.T) {
	_, cs := connect(t, "", nil)
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "tools_list.golden.json", tools.Tools)
}
