package server_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/omnidev/omnidev/internal/testrepo"
)

type runsExecOut struct {
	ExitCode     int      `json:"exit_code"`
	Stdout       string   `json:"stdout"`
	Stderr       string   `json:"stderr"`
	RunID        string   `json:"run_id"`
	ChangedFiles []string `json:"changed_files"`
	Calls        []struct {
		Capability string `json:"capability"`
		Tool       string `json:"tool"`
		MS         int64  `json:"ms"`
		OK         bool   `json:"ok"`
	} `json:"calls"`
}

// TestEndToEndRunsModule: a program lists, shows and undoes an earlier run
// through `import { runs } from "omnidev"`, with the real binary and Bun:
// the worktree comes back byte for byte, the undo is the program's own
// change, and undoing the undo puts the run's changes back. An unknown run
// and a file changed since are refused with what to do.
func TestEndToEndRunsModule(t *testing.T) {
	root := fixtureRepo(t)
	writeFile(t, root, "old.txt", "to be deleted\n")
	git(t, root, "add", "old.txt")
	git(t, root, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "old")
	writeFile(t, root, "draft.txt", "uncommitted draft\n") // untracked, kept as is
	s := startServer(t, root)
	ctx := t.Context()
	run := func(code string) runsExecOut {
		t.Helper()
		var out runsExecOut
		s.call(t, ctx, "omni_execute", map[string]any{"code": code}, &out)
		return out
	}

	before := testrepo.Snapshot(t, root)
	a := run(`import { writeFileSync, rmSync, mkdirSync } from "node:fs";
mkdirSync("notes", { recursive: true });
writeFileSync("notes/new.txt", "created\n");
writeFileSync("README.md", "# fixture\n\nline 2 changed\n");
writeFileSync("draft.txt", "draft, edited\n");
rmSync("old.txt");`)
	if a.ExitCode != 0 || a.RunID == "" {
		t.Fatalf("first run: %+v", a)
	}
	afterA := testrepo.Snapshot(t, root)

	b := run(`import { runs } from "omnidev";
const list = await runs.list();
const shown = await runs.show(` + jsString(a.RunID) + `);
const res = await runs.undo(` + jsString(a.RunID) + `);
console.log(JSON.stringify({ ids: list.map((r) => r.id), first: list[0], shown, res }));`)
	if b.ExitCode != 0 {
		t.Fatalf("undo run: %+v", b)
	}
	var got struct {
		IDs   []string `json:"ids"`
		First struct {
			Files     int    `json:"files"`
			FirstLine string `json:"first_line"`
		} `json:"first"`
		Shown struct {
			Program string `json:"program"`
			Diff    string `json:"diff"`
			Changes []struct {
				Path, Status string
			} `json:"changes"`
		} `json:"shown"`
		Res struct {
			Undone   string   `json:"undone"`
			RunID    string   `json:"run_id"`
			Restored []string `json:"restored"`
		} `json:"res"`
	}
	if err := json.Unmarshal([]byte(b.Stdout), &got); err != nil {
		t.Fatalf("undo run's output %q: %v", b.Stdout, err)
	}
	files := []string{"README.md", "draft.txt", "notes/new.txt", "old.txt"}
	if len(got.IDs) == 0 || got.IDs[0] != a.RunID || got.First.Files != 4 || !strings.HasPrefix(got.First.FirstLine, "import") {
		t.Errorf("runs.list() = %v, first %+v; want %s first, with 4 files", got.IDs, got.First, a.RunID)
	}
	for _, w := range []string{"-line two\n", "+line 2 changed\n", "+created\n", "-to be deleted\n", "-uncommitted draft\n"} {
		if !strings.Contains(got.Shown.Diff, w) {
			t.Errorf("runs.show diff lacks %q:\n%s", w, got.Shown.Diff)
		}
	}
	if !strings.Contains(got.Shown.Program, `rmSync("old.txt")`) || len(got.Shown.Changes) != 4 {
		t.Errorf("runs.show = %+v", got.Shown)
	}
	if got.Res.Undone != a.RunID || got.Res.RunID == "" || !slices.Equal(got.Res.Restored, files) {
		t.Errorf("runs.undo = %+v; want %s undone, a run id, %v restored", got.Res, a.RunID, files)
	}
	if diff := testrepo.SnapshotDiff(before, testrepo.Snapshot(t, root)); diff != "" {
		t.Errorf("the worktree after the undo differs from before the run \n%s", diff)
	}
	// The undo is this run's change, and a call of its log.
	if !slices.Equal(b.ChangedFiles, files) {
		t.Errorf("the undo run's changed_files = %v, want %v", b.ChangedFiles, files)
	}
	if len(b.Calls) != 3 || b.Calls[2].Capability != "omnidev" || b.Calls[2].Tool != "undo" || !b.Calls[2].OK {
		t.Fatalf("calls = %+v", b.Calls)
	}
	t.Logf("runs.list %d ms, runs.show %d ms, runs.undo of 4 files %d ms", b.Calls[0].MS, b.Calls[1].MS, b.Calls[2].MS)

	// Undoing the undo puts the first run's changes back.
	c := run(`import { runs } from "omnidev";
console.log(JSON.stringify(await runs.undo(` + jsString(got.Res.RunID) + `)));`)
	if c.ExitCode != 0 {
		t.Fatalf("undo of the undo: %+v", c)
	}
	if diff := testrepo.SnapshotDiff(afterA, testrepo.Snapshot(t, root)); diff != "" {
		t.Errorf("after undoing the undo \n%s", diff)
	}

	tests := []struct {
		name, code string
		want       []string
	}{
		{"unknown run", `await runs.undo("zzzzzz")`, []string{`runs.undo: no such run: "zzzzzz"; runs.list() lists the runs kept`}},
		{"changed since", `await runs.undo(` + jsString(a.RunID) + `)`, []string{"README.md changed since the run; nothing restored", "force: true"}},
		{"show without an id", `await (runs as any).show()`, []string{"runs.show: no such run"}},
	}
	writeFile(t, root, "README.md", "edited by hand\n")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := run(`import { runs } from "omnidev";
try { ` + tt.code + `; console.log("resolved"); } catch (e: any) { console.log("rejected: " + e.message); }`)
			for _, w := range tt.want {
				if !strings.Contains(out.Stdout, "rejected: ") || !strings.Contains(out.Stdout, w) {
					t.Errorf("stdout %q; want a rejection saying %q", out.Stdout, w)
				}
			}
			if len(out.ChangedFiles) != 0 {
				t.Errorf("a refused call changed %v", out.ChangedFiles)
			}
		})
	}
	if data, _ := os.ReadFile(filepath.Join(root, "README.md")); string(data) != "edited by hand\n" {
		t.Errorf("README.md = %q after a refused undo", data)
	}
}

// TestEndToEndRunsModuleRuntimes: the module resolves, and reaches the
// server, under Node (tsx) and Deno too, through `omnidev exec`.
func TestEndToEndRunsModuleRuntimes(t *testing.T) {
	for _, rt := range []string{"node", "deno"} {
		t.Run(rt, func(t *testing.T) {
			root := fixtureRepo(t)
			cfg := filepath.Join(root, "omni", "config.toml")
			data, err := os.ReadFile(cfg)
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(cfg, []byte(strings.Replace(string(data), `runtime = "bun"`, `runtime = "`+rt+`"`, 1)), 0o644)
			git(t, root, "add", "-A")
			git(t, root, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", rt)
			writeFile(t, root, "prog.ts", `import { runs } from "omnidev";
const list = await runs.list(5);
console.log("listed " + list.length);
try { await runs.show("nope"); } catch (e: any) { console.log("rejected: " + e.message); }
`)
			cmd := exec.Command(binary, "exec", "--json", "prog.ts")
			cmd.Dir = root
			out, err := cmd.Output()
			var res runsExecOut
			if jerr := json.Unmarshal(out, &res); jerr != nil {
				t.Fatalf("omnidev exec: %v %v\n%s", err, jerr, out)
			}
			if res.ExitCode != 0 || !strings.Contains(res.Stdout, "listed 0") || !strings.Contains(res.Stdout, `rejected: runs.show: no such run: "nope"`) {
				t.Errorf("%s: %+v", rt, res)
			}
		})
	}
}

// filesDiff says which files differ between want and got, by path.
func jsString(s string) string {
	data, _ := json.Marshal(s)
	return string(data)
}

// TestEndToEndRunsShowBounded: a program writes both sides of a run's diff,
// and two files of 60,000 lines with none in common took Myers' diff 37 s
// (8 MiB ones an hour each), holding the store, and the program's
// omni_execute past its timeout while runs.show was in flight. The diff
// is coarser past a timeout.
func TestEndToEndRunsShowBounded(t *testing.T) {
	root := fixtureRepo(t)
	s := startServer(t, root)
	ctx := t.Context()
	write := func(tag string) runsExecOut {
		t.Helper()
		var out runsExecOut
		s.call(t, ctx, "omni_execute", map[string]any{"code": `import { writeFileSync } from "node:fs";
for (const f of ["x1.txt", "x2.txt"]) {
  let s = "";
  for (let i = 0; i < 60000; i++) s += "` + tag + `" + i + "\n";
  writeFileSync(f, s);
}`}, &out)
		if out.ExitCode != 0 || out.RunID == "" {
			t.Fatalf("run: %+v", out)
		}
		return out
	}
	write("a")
	b := write("b")
	start := time.Now()
	var out runsExecOut
	s.call(t, ctx, "omni_execute", map[string]any{"timeout_ms": 20000, "code": `import { runs } from "omnidev";
const r = await runs.show(` + jsString(b.RunID) + `);
console.log(r.diff.includes("-a0\n") && r.diff.includes("+b59999\n") ? "shown" : "wrong diff");`}, &out)
	if took := time.Since(start); took > 15*time.Second || out.Stdout != "shown\n" {
		t.Errorf("runs.show took %v: %+v", took, out)
	}
}

// TestEndToEndRunsUndoNotUTF8: a run's record is JSON, where a name that
// is not UTF-8 becomes another (each bad byte U+FFFD): once read back, in
// another process, a program that had made "b\xff.t" had runs.undo delete
// the user's "b\uFFFD.t" instead. Such a file's states are not kept, and
// undo leaves it.
func TestEndToEndRunsUndoNotUTF8(t *testing.T) {
	root := fixtureRepo(t)
	writeFile(t, root, "b\uFFFD.t", "x\n")
	git(t, root, "add", "-A")
	git(t, root, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "user's file")
	cmd := exec.Command(binary, "--dir", root, "exec", "-")
	cmd.Stdin = strings.NewReader(`import { writeFileSync } from "node:fs";
writeFileSync(Buffer.from([0x62, 0xff, 0x2e, 0x74]), "x\n");`)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("omnidev exec: %v\n%s", err, out)
	}
	s := startServer(t, root)
	var b runsExecOut
	s.call(t, t.Context(), "omni_execute", map[string]any{"code": `import { runs } from "omnidev";
console.log(JSON.stringify(await runs.undo()));`}, &b)
	if data, err := os.ReadFile(filepath.Join(root, "b\uFFFD.t")); err != nil || string(data) != "x\n" {
		t.Errorf("the user's b\uFFFD.t after the undo: %q, %v; the undo: %+v", data, err, b)
	}
}
