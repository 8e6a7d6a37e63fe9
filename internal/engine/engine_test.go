package engine

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/omnidev/omnidev/internal/capability"
	"github.com/omnidev/omnidev/internal/runs"
	"github.com/omnidev/omnidev/internal/testrepo"
)

// newTestEngine opens an engine on a copy of this repository's omni/.
func newTestEngine(t testing.TB) *Engine {
	t.Helper()
	e, err := Open(context.Background(), testrepo.CopyOmni(t), Options{Environ: os.Environ()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func TestOnReload(t *testing.T) {
	e := newTestEngine(t)
	var got []*capability.Registry
	e.OnReload(func(reg *capability.Registry) {
		if e.Registry() != reg {
			t.Error("listener called before the registry is the engine's current one")
		}
		got = append(got, reg)
	})
	doc := filepath.Join(e.Root(), "omni", "capabilities", "tasks", "docs", "new.md")
	if err := os.WriteFile(doc, []byte("# New\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := e.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !slices.ContainsFunc(got[0].Capabilities[1].Docs, func(d capability.Doc) bool { return d.Name == "new" }) {
		t.Fatalf("after a reload that adds a doc: %d calls, want 1 with the new doc", len(got))
	}
	config := filepath.Join(e.Root(), "omni", "config.toml")
	if err := os.WriteFile(config, []byte("project = [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := e.Reload(t.Context()); err == nil {
		t.Fatal("reload of a broken config succeeded")
	}
	if len(got) != 1 {
		t.Errorf("a failed reload called the listener (%d calls)", len(got))
	}
}

// TestReloadKeepRuns: a [runs] keep set after the server started applies
// to the next runs, without a restart.
func TestReloadKeepRuns(t *testing.T) {
	e := newTestEngine(t)
	config := filepath.Join(e.Root(), "omni", "config.toml")
	data, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(config, append(data, "\n[runs]\nkeep = 2\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := e.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	// Pruning waits for a few runs past keep (runs.pruneSlack, 10).
	for range 13 {
		if res, err := e.Execute(t.Context(), ExecRequest{Code: "console.log(1)"}); err != nil || res.ExitCode != 0 {
			t.Fatalf("run: %+v, %v", res, err)
		}
	}
	var n int
	if err := e.Runs(t.Context(), func(s *runs.Store) error {
		recs, err := s.List(0)
		n = len(recs)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("%d runs kept after the reload set keep = 2, want 2", n)
	}
}

// TestRefusesSymlinkedOwnFolders: a repository whose .omni, or a folder
// omnidev writes in below it, is a symlink (a clone can hold one) is
// refused before anything is written through it.
func TestRefusesSymlinkedOwnFolders(t *testing.T) {
	for _, rel := range []string{".omni", ".omni/sandbox", ".omni/runs", ".omni/state"} {
		t.Run(rel, func(t *testing.T) {
			root, elsewhere := testrepo.CopyOmni(t), t.TempDir()
			link := filepath.Join(root, filepath.FromSlash(rel))
			os.RemoveAll(link)
			os.MkdirAll(filepath.Dir(link), 0o755)
			if err := os.Symlink(elsewhere, link); err != nil {
				t.Fatal(err)
			}
			e, err := Open(t.Context(), root, Options{Environ: os.Environ()})
			if err == nil {
				e.Close()
				t.Fatalf("Open with %s a symlink succeeded", rel)
			}
			if !strings.Contains(err.Error(), "is a symlink") {
				t.Errorf("err = %v", err)
			}
			if left, _ := os.ReadDir(elsewhere); len(left) != 0 {
				t.Errorf("written through the symlink: %v", left)
			}
		})
	}
}
