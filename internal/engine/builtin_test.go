package engine

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/omnidev/omnidev/internal/isolate"
	"github.com/omnidev/omnidev/internal/query"
	"github.com/omnidev/omnidev/internal/runs"
)

// TestBuiltinShowHidesHiddenFiles: runs.show gives the path and status of
// a file hidden from programs, never its content.
func TestBuiltinShowHidesHiddenFiles(t *testing.T) {
	e := newTestEngine(t)
	res, err := e.Execute(t.Context(), ExecRequest{Code: `import { writeFileSync } from "node:fs";
writeFileSync("public.txt", "public words\n");
writeFileSync("secret.key", ["the", "private", "key"].join(" ") + "\n");`})
	if err != nil || res.RunID == "" {
		t.Fatalf("run: %v %+v", err, res)
	}
	b := e.newBuiltin()
	b.hidden = func(rel string) bool { return rel == "secret.key" }
	data, err := b.call(t.Context(), "show", json.RawMessage(`{"id":"`+res.RunID+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Structured runDetail `json:"structuredContent"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	d := out.Structured
	if strings.Contains(string(data), "the private key") || !strings.Contains(d.Diff, "+public words") || !strings.Contains(d.Diff, "# content withheld: secret.key") {
		t.Errorf("runs.show answer:\n%s", data)
	}
	var withheld []string
	for _, f := range d.Changes {
		if f.Withheld {
			withheld = append(withheld, f.Path)
		}
	}
	if len(withheld) != 1 || withheld[0] != "secret.key" {
		t.Errorf("withheld = %v, want [secret.key]", withheld)
	}

	b.end()
	if _, err := b.call(t.Context(), "list", nil); err == nil || !strings.Contains(err.Error(), "the program has ended") {
		t.Errorf("a call after the program ended: %v", err)
	}
}

func TestBuiltinRefuses(t *testing.T) {
	e := newTestEngine(t)
	tests := []struct {
		tool, args, want string
	}{
		{"undo", `{"id":"nope"}`, `runs.undo: no such run: "nope"; runs.list() lists the runs kept`},
		{"show", `{"id":""}`, "runs.show: no such run"},
		{"list", `{"n":"ten"}`, "runs.list: invalid arguments"},
		{"undo", `{"id":"x","forc":true}`, `unknown field "forc"`},
		{"redo", `{}`, `no function "redo"`},
	}
	for _, tt := range tests {
		t.Run(tt.tool+tt.args, func(t *testing.T) {
			_, err := e.newBuiltin().call(t.Context(), tt.tool, json.RawMessage(tt.args))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestCappedWriter(t *testing.T) {
	w := &cappedWriter{max: 10}
	w.Write([]byte("line 1\n"))
	w.Write([]byte("line 2\nline 3\n"))
	w.Write([]byte("more\n"))
	if w.String() != "line 1\n" || !w.cut || w.total != 26 {
		t.Errorf("kept %q, cut %v, total %d", w.String(), w.cut, w.total)
	}
}

func TestReadOnlyToRuns(t *testing.T) {
	for rel, want := range map[string]bool{
		"omni/config.toml": true, "omni.toml": true, ".git/config": true, ".omni/runs/x": true, "omni": true,
		".omni/state/tasks.json": false, "src/omni/x.ts": false, "omnis.txt": false, "README.md": false,
	} {
		if got := isolate.ReadOnlyToRuns(rel); got != want {
			t.Errorf("ReadOnlyToRuns(%q) = %v, want %v", rel, got, want)
		}
	}
}

// TestBuiltinTypeChecks: the type check knows the omnidev module, so a
// program using runs checks clean and a wrong call is reported.
func TestBuiltinTypeChecks(t *testing.T) {
	e := newTestEngine(t)
	tests := []struct {
		name, code string
		wantErr    string // "" for a clean check
	}{
		{"right", `import { runs, type RunSummary } from "omnidev";
const list: RunSummary[] = await runs.list(5);
const shown = await runs.show(list[0]?.id ?? "x");
const res = await runs.undo(undefined, { force: true });
console.log(shown.diff.length, res.restored.length, res.run_id ?? "");`, ""},
		{"wrong", `import { runs } from "omnidev";
await runs.undo(42);`, "number"},
		{"unknown function", `import { runs } from "omnidev";
await runs.redo("x");`, "redo"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := e.Execute(t.Context(), ExecRequest{Code: tt.code, TypeCheck: "error"})
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tt.wantErr == "" && (res.TypeCheck != "ok" || len(res.TypeErrors) > 0):
				t.Errorf("typecheck %q, errors %+v; want ok", res.TypeCheck, res.TypeErrors)
			case tt.wantErr != "" && (len(res.TypeErrors) == 0 || !strings.Contains(res.TypeErrors[0].Message, tt.wantErr)):
				t.Errorf("typecheck %q, errors %+v; want one mentioning %q", res.TypeCheck, res.TypeErrors, tt.wantErr)
			}
		})
	}
}

// TestQueryListsBuiltin: omni_query names the omnidev module in the empty
// query's summary and types, and in a typed query about runs.
func TestQueryListsBuiltin(t *testing.T) {
	e := newTestEngine(t)
	tests := []struct {
		req  query.Request
		want bool
	}{
		{query.Request{}, true},
		{query.Request{Query: "undo the last run", IncludeTypes: true}, true},
		{query.Request{Query: "undo the last run"}, false},
		{query.Request{Query: "tasks", IncludeTypes: true}, false},
	}
	for _, tt := range tests {
		t.Run(tt.req.Query, func(t *testing.T) {
			res, err := e.Query(t.Context(), tt.req)
			if err != nil {
				t.Fatal(err)
			}
			listed := slices.ContainsFunc(res.Summary, func(s query.CapabilitySummary) bool { return s.Module == "omnidev" })
			typed := strings.Contains(res.TypeDefinitions, "declare module 'omnidev'") && strings.Contains(res.TypeDefinitions, "undo(id?: string")
			if listed != tt.want || typed != tt.want {
				t.Errorf("summary lists omnidev: %v, types declare it: %v; want %v", listed, typed, tt.want)
			}
		})
	}
}

// TestBuiltinUndoBounded: a program undoing in a loop makes at most
// maxUndos records, so that it cannot push the runs before it out of
// [runs] keep; the earliest run stays there to undo.
func TestBuiltinUndoBounded(t *testing.T) {
	e := newTestEngine(t)
	first, err := e.Execute(t.Context(), ExecRequest{Code: `import { writeFileSync } from "node:fs";
writeFileSync("flip.txt", "run\n");`})
	if err != nil || first.RunID == "" {
		t.Fatalf("run: %v %+v", err, first)
	}
	b := e.newBuiltin()
	var refused error
	for i := range 3 * maxUndos {
		if _, err := b.call(t.Context(), "undo", nil); err != nil {
			refused = err
			if i != maxUndos {
				t.Errorf("undo %d refused: %v", i+1, err)
			}
			break
		}
	}
	if refused == nil || !strings.Contains(refused.Error(), "omnidev undo ID") {
		t.Fatalf("undo %d times: last error %v, want a refusal naming omnidev undo", 3*maxUndos, refused)
	}
	b.end()
	if err := e.Runs(t.Context(), func(s *runs.Store) error {
		_, err := s.Get(first.RunID)
		return err
	}); err != nil {
		t.Errorf("the first run is out of reach: %v", err)
	}
}
