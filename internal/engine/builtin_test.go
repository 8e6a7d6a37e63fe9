package engine

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/omnidev/omnidev/internal/isolate"
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
