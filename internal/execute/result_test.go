package execute

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/omnidev/omnidev/internal/changes"
	"github.com/omnidev/omnidev/internal/testrepo"
)

func appendTo(t *testing.T, root, rel, content string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(root, rel), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(content); err != nil {
		t.Fatal(err)
	}
}

func lines(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

// TestRunReportsChanges goes through the real runtime: the program edits a
// dirty file, deletes one, creates one and writes its own state in .omni.
func TestRunReportsChanges(t *testing.T) {
	requireBun(t)
	root := testrepo.New(t, map[string]string{"a.txt": "1\n2\n", "b.txt": lines(3), "c.txt": "c\n"})
	appendTo(t, root, "a.txt", "dirty\n")
	code := `import { appendFileSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
appendFileSync("a.txt", "from the run\n");
rmSync("b.txt");
writeFileSync("d.txt", "one\ntwo\n");
mkdirSync(".omni/state", { recursive: true });
writeFileSync(".omni/state/x.json", "{}");
`
	res, err := New(root, nil).Run(t.Context(), request(prepare(t, root), code))
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 {
		t.Fatalf("exit %d: %s", res.ExitCode, res.Stderr)
	}
	want := []changes.Change{
		{Path: "a.txt", Status: changes.StatusModified, Insertions: 1},
		{Path: "b.txt", Status: changes.StatusDeleted, Deletions: 3},
		{Path: "d.txt", Status: changes.StatusAdded, Insertions: 2},
	}
	for i := range res.Changes {
		res.Changes[i].Prior = nil // internal/runs' business, tested there
	}
	if !reflect.DeepEqual(res.Changes, want) {
		t.Errorf("changes:\n got %+v\nwant %+v", res.Changes, want)
	}
	if got := strings.Join(res.ChangedFiles, ","); got != "a.txt,b.txt,d.txt" {
		t.Errorf("changed_files = %s", got)
	}
	if want := (DiffStat{Files: 3, Insertions: 3, Deletions: 3}); res.DiffStat != want {
		t.Errorf("diff_stat = %+v, want %+v", res.DiffStat, want)
	}
}

// TestResultJSON pins the field names and that empty lists are [] (the
// server's output schema declares arrays, not null).
func TestResultJSON(t *testing.T) {
	requireBun(t)
	root := t.TempDir()
	res, err := New(root, nil).Run(t.Context(), request(prepare(t, root), "export function main() { return 0; }\n"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`"exit_code":0`, `"stdout":""`, `"stderr":""`, `"changed_files":[]`,
		`"diff_stat":{"files":0,"insertions":0,"deletions":0}`, `"changes":[]`,
		`"timed_out":false`, `"cancelled":false`, `"truncated":{"stdout":false,"stderr":false}`, `"duration_ms":`,
	} {
		if !strings.Contains(string(data), want) {
			t.Errorf("result JSON lacks %s: %s", want, data)
		}
	}
}

func TestSetChangesBounded(t *testing.T) {
	// n changes in path order; the i-th has i%7 insertions, so the largest
	// are spread over the whole list.
	many := func(n int) []changes.Change {
		out := make([]changes.Change, n)
		for i := range out {
			out[i] = changes.Change{Path: fmt.Sprintf("f%05d", i), Status: changes.StatusAdded, Insertions: i % 7}
		}
		return out
	}
	tests := []struct {
		name        string
		changes     []changes.Change
		wantListed  int
		wantOmitted int
	}{
		{"none", nil, 0, 0},
		{"under the bound", many(3), 3, 0},
		{"at the bound", many(MaxListedChanges), MaxListedChanges, 0},
		{"one over", many(MaxListedChanges + 1), MaxListedChanges, 1},
		{"many", many(5000), MaxListedChanges, 5000 - MaxListedChanges},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r Result
			r.setChanges(tt.changes)
			if len(r.Changes) != tt.wantListed || len(r.ChangedFiles) != tt.wantListed || r.ChangesOmitted != tt.wantOmitted {
				t.Fatalf("listed %d changes and %d files, omitted %d; want %d listed, %d omitted",
					len(r.Changes), len(r.ChangedFiles), r.ChangesOmitted, tt.wantListed, tt.wantOmitted)
			}
			if r.Changes == nil || r.ChangedFiles == nil {
				t.Error("nil slices: JSON would show null")
			}
			want := DiffStat{Files: len(tt.changes)}
			for _, c := range tt.changes {
				want.Insertions += c.Insertions
			}
			if r.DiffStat != want {
				t.Errorf("diff_stat = %+v, want %+v (every change counted)", r.DiffStat, want)
			}
			// Listed: in path order, and none smaller than one left out.
			listed := map[string]bool{}
			smallestListed := 1 << 30
			for i, c := range r.Changes {
				listed[c.Path] = true
				smallestListed = min(smallestListed, c.Insertions)
				if r.ChangedFiles[i] != c.Path || i > 0 && r.Changes[i-1].Path >= c.Path {
					t.Fatalf("listed out of path order at %d: %v", i, r.ChangedFiles[max(i-1, 0):i+1])
				}
			}
			for _, c := range tt.changes {
				if !listed[c.Path] && c.Insertions > smallestListed {
					t.Fatalf("%s (+%d) left out while a change of +%d is listed", c.Path, c.Insertions, smallestListed)
				}
			}
		})
	}
}

// TestRunManyChangesBounded runs a program that creates many files and
// edits one tracked file a lot: the result lists 200 files, the edit among
// them, counts the rest, and stays small. (TestRunOverflow checks the
// bound on 20,000 files.)
func TestRunManyChangesBounded(t *testing.T) {
	requireBun(t)
	const n = 1000
	root := testrepo.New(t, map[string]string{"src/main.ts": lines(3)})
	code := fmt.Sprintf(`import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
for (let d = 0; d < %d / 100; d++) {
  mkdirSync("gen/d" + String(d).padStart(3, "0"), { recursive: true });
  for (let i = 0; i < 100; i++) {
    writeFileSync("gen/d" + String(d).padStart(3, "0") + "/f" + String(i).padStart(3, "0") + ".txt", "x\n");
  }
}
appendFileSync("src/main.ts", "a\nb\nc\n");
`, n)
	res, err := New(root, nil).Run(t.Context(), request(prepare(t, root), code))
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 {
		t.Fatalf("exit %d: %s", res.ExitCode, res.Stderr)
	}
	if len(res.Changes) != MaxListedChanges || len(res.ChangedFiles) != MaxListedChanges {
		t.Errorf("listed %d changes and %d changed_files, want %d", len(res.Changes), len(res.ChangedFiles), MaxListedChanges)
	}
	if want := n + 1 - MaxListedChanges; res.ChangesOmitted != want {
		t.Errorf("changes_omitted = %d, want %d", res.ChangesOmitted, want)
	}
	if want := (DiffStat{Files: n + 1, Insertions: n + 3}); res.DiffStat != want {
		t.Errorf("diff_stat = %+v, want %+v", res.DiffStat, want)
	}
	if i := slices.Index(res.ChangedFiles, "src/main.ts"); i < 0 {
		t.Errorf("the largest change, src/main.ts, is not listed: %v", res.ChangedFiles[:5])
	}
	data, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 32<<10 {
		t.Errorf("the result is %d bytes of JSON; a bounded list should keep it under 32 KiB", len(data))
	}
	t.Logf("result: %d bytes of JSON", len(data))
}
