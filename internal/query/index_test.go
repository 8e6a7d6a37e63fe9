package query

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/blevesearch/bleve/v2"

	"github.com/omnidev/omnidev/internal/capability"
)

// reopen opens dir with reg and fails the test on error; the index is
// closed at the end of the test.
func reopen(t *testing.T, dir string, reg *capability.Registry, logger *slog.Logger) *Index {
	t.Helper()
	if logger == nil {
		logger = testLogger(t)
	}
	x, err := Open(t.Context(), dir, reg, Options{Logger: logger})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { x.Close() })
	return x
}

// mustFind fails the test unless query's hits are exactly want.
func mustFind(t *testing.T, x *Index, query string, want ...string) {
	t.Helper()
	res, err := x.Search(t.Context(), Request{Query: query})
	if err != nil {
		t.Fatalf("Search(%q): %v", query, err)
	}
	if got := sources(res.Results); !slices.Equal(got, want) {
		t.Fatalf("Search(%q) = %q, want %q", query, got, want)
	}
}

// withSecrets returns the fixture with the disabled capability enabled.
func withSecrets() *capability.Registry {
	reg := fixture()
	reg.Capabilities = append(reg.Capabilities, disabledCapability())
	return reg
}

func TestReopenUnchangedIndexesNothing(t *testing.T) {
	dir := t.TempDir()
	x := reopen(t, dir, fixture(), nil)
	n := len(documents(fixture()))
	if got, want := x.Stats(), (UpdateStats{Added: n, Rebuilt: true}); !sameCounts(got, want) {
		t.Errorf("first open: %+v, want %+v", got, want)
	}
	x.Close()

	x = reopen(t, dir, fixture(), nil)
	if got, want := x.Stats(), (UpdateStats{Unchanged: n}); !sameCounts(got, want) {
		t.Errorf("reopen: %+v, want %+v", got, want)
	}
	mustFind(t, x, "ripgrep", "capability:search")
}

// sameCounts compares stats without their duration.
func sameCounts(a, b UpdateStats) bool {
	a.Duration, b.Duration = 0, 0
	return a == b
}

func TestUpdateIsIncremental(t *testing.T) {
	dir := t.TempDir()
	x := reopen(t, dir, withSecrets(), nil)
	n := len(documents(withSecrets()))
	secrets := len(documents(&capability.Registry{Capabilities: []*capability.Capability{disabledCapability()}}))
	mustFind(t, x, "vault", "capability:secrets", "doc:secrets/definition")

	edited := withSecrets()
	edited.Capabilities[0].Docs[1].Body = "# Undo a migration\n\nUse the zeppelin command.\n"
	added := withSecrets()
	added.Capabilities[4].Skills = append(added.Capabilities[4].Skills,
		capability.Skill{Name: "archive", Description: "Archive finished tasks"})

	steps := []struct {
		name string
		reg  *capability.Registry
		want UpdateStats
		// find and gone are queries that must find something, or nothing.
		find, gone string
	}{
		{name: "same content", reg: withSecrets(), want: UpdateStats{Unchanged: n}, find: "vault"},
		{name: "one doc changed", reg: edited, want: UpdateStats{Updated: 1, Unchanged: n - 1}, find: "zeppelin", gone: `"previous version"`},
		{name: "one skill added", reg: added, want: UpdateStats{Added: 1, Updated: 1, Unchanged: n - 1}, find: "archive", gone: "zeppelin"},
		{name: "capability disabled", reg: fixture(), want: UpdateStats{Removed: secrets + 1, Unchanged: n - secrets}, gone: "vault"},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			got, err := x.Update(t.Context(), st.reg)
			if err != nil {
				t.Fatalf("Update: %v", err)
			}
			if !sameCounts(got, st.want) {
				t.Errorf("Update = %+v, want %+v", got, st.want)
			}
			if st.find != "" {
				if res, _ := x.Search(t.Context(), Request{Query: st.find}); len(res.Results) == 0 {
					t.Errorf("Search(%q) found nothing", st.find)
				}
			}
			if st.gone != "" {
				mustFind(t, x, st.gone)
			}
		})
	}

	// What the last update wrote is what a restart finds.
	x.Close()
	x = reopen(t, dir, fixture(), nil)
	if got, want := x.Stats(), (UpdateStats{Unchanged: len(documents(fixture()))}); !sameCounts(got, want) {
		t.Errorf("reopen after updates: %+v, want %+v", got, want)
	}
	mustFind(t, x, "vault")
	res, _ := x.Search(t.Context(), Request{})
	if len(res.Summary) != len(fixture().Capabilities) {
		t.Errorf("summary of %d capabilities, want %d", len(res.Summary), len(fixture().Capabilities))
	}
}

func TestOpenRebuildsUnusableIndex(t *testing.T) {
	const (
		rebuilt = iota
		kept
		either // bleve fell back to an older intact snapshot, or gave up
	)
	tests := []struct {
		name   string
		damage func(t *testing.T, dir string)
		want   int
	}{
		{name: "garbage in every index file", want: rebuilt, damage: func(t *testing.T, dir string) {
			walkFiles(t, filepath.Join(dir, bleveDir), func(path string) {
				writeFile(t, path, bytes.Repeat([]byte("garbage!"), 512))
			})
		}},
		{name: "segments truncated", want: either, damage: func(t *testing.T, dir string) {
			walkFiles(t, filepath.Join(dir, bleveDir), func(path string) {
				if strings.HasSuffix(path, ".zap") {
					truncateHalf(t, path)
				}
			})
		}},
		{name: "root.bolt truncated", want: either, damage: func(t *testing.T, dir string) {
			truncateHalf(t, filepath.Join(dir, bleveDir, "store", "root.bolt"))
		}},
		{name: "index folder gone", want: rebuilt, damage: func(t *testing.T, dir string) {
			removeAll(t, filepath.Join(dir, bleveDir))
		}},
		{name: "index folder is a file", want: rebuilt, damage: func(t *testing.T, dir string) {
			removeAll(t, filepath.Join(dir, bleveDir))
			writeFile(t, filepath.Join(dir, bleveDir), []byte("not a folder"))
		}},
		{name: "foreign bleve index", want: rebuilt, damage: func(t *testing.T, dir string) {
			removeAll(t, filepath.Join(dir, bleveDir))
			idx, err := bleve.New(filepath.Join(dir, bleveDir), bleve.NewIndexMapping())
			if err != nil {
				t.Fatal(err)
			}
			idx.Index("one", map[string]string{"text": "foreign"})
			idx.Close()
		}},
		{name: "manifest truncated", want: rebuilt, damage: func(t *testing.T, dir string) {
			truncateHalf(t, filepath.Join(dir, manifestFile))
		}},
		{name: "manifest missing", want: rebuilt, damage: func(t *testing.T, dir string) {
			removeAll(t, filepath.Join(dir, manifestFile))
		}},
		{name: "manifest of another schema version", want: rebuilt, damage: func(t *testing.T, dir string) {
			editManifest(t, dir, func(m map[string]any) { m["schema"] = schemaVersion + 1 })
		}},
		{name: "manifest of another program", want: rebuilt, damage: func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, manifestFile), []byte(`{"docs": {}, "version": 3}`))
		}},
		{name: "hashes list documents the index lacks", want: rebuilt, damage: func(t *testing.T, dir string) {
			editHashes(t, dir, func(h map[string]string) { h["doc:ghost/one"] = "0123" })
		}},
		{name: "hashes miss documents the index holds", want: rebuilt, damage: func(t *testing.T, dir string) {
			editHashes(t, dir, func(h map[string]string) { delete(h, "capability:search") })
		}},
		{name: "hashes missing", want: rebuilt, damage: func(t *testing.T, dir string) {
			idx, err := bleve.Open(filepath.Join(dir, bleveDir))
			if err != nil {
				t.Fatal(err)
			}
			idx.DeleteInternal([]byte(hashesKey))
			idx.Close()
		}},
		{name: "files of others beside the index", want: kept, damage: func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "notes.txt"), []byte("not ours"))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			x := reopen(t, dir, fixture(), nil)
			x.Close()
			tt.damage(t, dir)

			var logs bytes.Buffer
			x = reopen(t, dir, fixture(), slog.New(slog.NewTextHandler(&logs, nil)))
			t.Logf("logs of the reopen:\n%s", &logs)
			st := x.Stats()
			if (tt.want == rebuilt && !st.Rebuilt) || (tt.want == kept && st.Rebuilt) ||
				st.Added+st.Unchanged != len(documents(fixture())) {
				t.Errorf("stats %+v, want every document, rebuilt %v", st, tt.want == rebuilt)
			}
			if st.Rebuilt && (!strings.Contains(logs.String(), "rebuilding") || strings.Contains(logs.String(), "reason=<nil>")) {
				t.Errorf("rebuild not logged; logs:\n%s", logs.String())
			}
			mustFind(t, x, "ripgrep", "capability:search")

			// The rebuilt index is kept. When bleve fell back to an older
			// snapshot instead (either), its damaged store may fall back
			// again or fail on the next open (seen: a mapping that no longer
			// parses); what must hold then is that every document is there
			// and found, whatever bleve does underneath.
			x.Close()
			x = reopen(t, dir, fixture(), nil)
			st = x.Stats()
			switch {
			case tt.want == either && st.Added+st.Unchanged != len(documents(fixture())):
				t.Errorf("reopen after the recovery: %+v, want every document", st)
			case tt.want != either && (st.Rebuilt || st.Unchanged != len(documents(fixture()))):
				t.Errorf("reopen after the rebuild: %+v, want every document unchanged", st)
			}
			mustFind(t, x, "ripgrep", "capability:search")
			if tt.name == "files of others beside the index" {
				if _, err := os.Stat(filepath.Join(dir, "notes.txt")); err != nil {
					t.Errorf("a file that is not ours was touched: %v", err)
				}
			}
		})
	}
}

func TestOpenLocked(t *testing.T) {
	dir := t.TempDir()
	x := reopen(t, dir, fixture(), nil)
	if _, err := Open(t.Context(), dir, fixture(), Options{}); !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open = %v, want ErrLocked", err)
	}
	mustFind(t, x, "ripgrep", "capability:search")
	x.Close()
	y := reopen(t, dir, fixture(), nil)
	if st := y.Stats(); st.Rebuilt || st.Unchanged != len(documents(fixture())) {
		t.Errorf("open after the lock was released: %+v, want the index as it was", st)
	}
}

func TestClosed(t *testing.T) {
	x := reopen(t, t.TempDir(), fixture(), nil)
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Errorf("second Close = %v, want nil", err)
	}
	for _, q := range []string{"tasks", ""} {
		if _, err := x.Search(t.Context(), Request{Query: q}); !errors.Is(err, ErrClosed) {
			t.Errorf("Search(%q) after Close = %v, want ErrClosed", q, err)
		}
	}
	if _, err := x.Update(t.Context(), fixture()); !errors.Is(err, ErrClosed) {
		t.Errorf("Update after Close = %v, want ErrClosed", err)
	}
}

func TestOpenEmpty(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := Open(ctx, t.TempDir(), fixture(), Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Open(cancelled) = %v, want context.Canceled", err)
	}

	x := reopen(t, t.TempDir(), nil, nil)
	res, err := x.Search(t.Context(), Request{Query: "tasks"})
	if err != nil || len(res.Results) != 0 {
		t.Errorf("Search on a nil registry = %v, %v; want no hits", res, err)
	}
	res, err = x.Search(t.Context(), Request{})
	if err != nil || len(res.Summary) != 0 || res.TypeDefinitions != "" {
		t.Errorf("empty Search on a nil registry = %+v, %v; want nothing", res, err)
	}
}

func TestSearchDuringUpdate(t *testing.T) {
	// Run with -race: searches read what Update writes.
	x := reopen(t, t.TempDir(), fixture(), nil)
	regs := []*capability.Registry{withSecrets(), fixture()}
	edited := fixture()
	edited.Capabilities[2].Description = "Review merge requests"
	regs = append(regs, edited)

	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for _, q := range []string{"taks", "review", "", "vault secrets", `"rollback a deployment"`} {
		wg.Go(func() {
			for ctx.Err() == nil {
				res, err := x.Search(ctx, Request{Query: q, IncludeTypes: true, Limit: 5})
				if err != nil && ctx.Err() == nil {
					errs <- err
					return
				}
				if err == nil && res.Results == nil {
					errs <- errors.New("nil results")
					return
				}
			}
		})
	}
	for i := range 12 {
		if _, err := x.Update(t.Context(), regs[i%len(regs)]); err != nil {
			t.Errorf("Update: %v", err)
		}
	}
	cancel()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("Search: %v", err)
	}
}

func walkFiles(t *testing.T, root string, f func(path string)) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			f(path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func truncateHalf(t *testing.T, path string) {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, info.Size()/2); err != nil {
		t.Fatal(err)
	}
}

func removeAll(t *testing.T, path string) {
	t.Helper()
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
}

// editManifest rewrites the manifest in dir through edit.
func editManifest(t *testing.T, dir string, edit func(m map[string]any)) {
	t.Helper()
	path := filepath.Join(dir, manifestFile)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	if data, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, data)
}

// editHashes rewrites the document hashes kept in the index in dir.
func editHashes(t *testing.T, dir string, edit func(h map[string]string)) {
	t.Helper()
	idx, err := bleve.Open(filepath.Join(dir, bleveDir))
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	data, err := idx.GetInternal([]byte(hashesKey))
	if err != nil {
		t.Fatal(err)
	}
	h := map[string]string{}
	if err := json.Unmarshal(data, &h); err != nil {
		t.Fatal(err)
	}
	edit(h)
	if data, err = json.Marshal(h); err != nil {
		t.Fatal(err)
	}
	if err := idx.SetInternal([]byte(hashesKey), data); err != nil {
		t.Fatal(err)
	}
}

func TestOpenBuildsInBatches(t *testing.T) {
	// More documents than one batch of a build holds: the index holds
	// them all, with their hashes, and reopens without indexing again.
	n := buildBatchDocs + 50
	var ds []capability.Doc
	for i := range n {
		ds = append(ds, capability.Doc{Name: fmt.Sprintf("d%04d", i), Title: "Doc", Body: fmt.Sprintf("word%04d", i)})
	}
	reg := &capability.Registry{Capabilities: []*capability.Capability{{ID: "many", Module: "many", Docs: ds}}}
	dir := t.TempDir()
	x := reopen(t, dir, reg, nil)
	if st := x.Stats(); st.Added != n+1 || !st.Rebuilt {
		t.Errorf("first open: %+v, want %d added", st, n+1)
	}
	mustFind(t, x, fmt.Sprintf("word%04d", n-1), fmt.Sprintf("doc:many/d%04d", n-1))
	x.Close()
	x = reopen(t, dir, reg, nil)
	if st := x.Stats(); st.Unchanged != n+1 || st.Rebuilt {
		t.Errorf("reopen: %+v, want %d unchanged", st, n+1)
	}
}

// TestOnBuild: the build hook is called around each build from nothing,
// with the number of documents indexed, and not when an index is reopened
// or updated.
func TestOnBuild(t *testing.T) {
	var builds []int
	open := 0
	opts := Options{Logger: testLogger(t), OnBuild: func() func(int) {
		open++
		return func(docs int) { open--; builds = append(builds, docs) }
	}}
	dir := t.TempDir()
	reg := fixture()
	x, err := Open(t.Context(), dir, reg, opts)
	if err != nil {
		t.Fatal(err)
	}
	n := x.Stats().Added
	if _, err := x.Update(t.Context(), withDocBody(reg, 0, 0, "# Edited\n\nOne more word.\n")); err != nil {
		t.Fatal(err)
	}
	x.Close()
	x, err = Open(t.Context(), dir, reg, opts)
	if err != nil {
		t.Fatal(err)
	}
	x.Close()
	if open != 0 || len(builds) != 1 || builds[0] != n || n == 0 {
		t.Errorf("builds %v (%d still open), want one of %d documents", builds, open, n)
	}
}
