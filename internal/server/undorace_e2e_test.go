//go:build linux

package server_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestUndoRaceFromProgram: a program asks the server to undo a run while a
// process of its own swaps the folder being restored for a symlink into
// .git/hooks or to a folder outside the repository. The server writes
// with the user's rights and outside the sandbox: it must never write
// through the symlink (a hook is code git runs on the host). Each run
// makes the 10 undos a program may; three runs, as root and as nobody, in
// both modes of isolation.
func TestUndoRaceFromProgram(t *testing.T) {
	for _, id := range identities() {
		t.Run(id.name, func(t *testing.T) {
			hook := "#!/bin/sh\ntouch HOOK-RAN\n"
			r := newEscapeRepo(t, id, escapeFiles(id, false, map[string]string{"a/pre-commit": hook, "d/a/pre-commit": hook, "d/a/keep.txt": "k\n"}))
			outside := filepath.Join(r.dir, "outside")
			if err := os.Mkdir(outside, 0o777); err != nil {
				t.Fatal(err)
			}
			r.own()
			first := r.exec(`import { writeFileSync } from "node:fs";
writeFileSync("a/pre-commit", "changed by the run\n");
writeFileSync("d/a/pre-commit", "changed by the run\n");
writeFileSync("d/a/made.txt", "made\n");`, time.Minute)
			var firstOut struct {
				RunID string `json:"run_id"`
			}
			if err := json.Unmarshal([]byte(first.raw), &firstOut); err != nil || firstOut.RunID == "" {
				t.Fatalf("first run: %v\n%s", err, first.raw)
			}
			hooksDir := filepath.Join(r.root, ".git", "hooks")
			refused := 0
			for round := range 3 {
				out := r.exec(fmt.Sprintf(`import { runs } from "omnidev";
import { spawn } from "node:child_process";
const swap = (dir: string, target: string) => spawn("sh", ["-c", "cd " + dir + "; while :; do mv a a.real 2>/dev/null && ln -s " + target + " a && sleep 0.001; rm -f a; mv a.real a 2>/dev/null; done"], { stdio: "ignore" });
// The top-level folder a (where new top-level entries are allowed: the
// Landlock mode) to a folder beside it, and d/a to %s.
const swappers = [swap(".", ".git/hooks"), swap("d", %q)];
let done = 0, refused = 0;
for (let i = 0; i < 10; i++) {
  try { await runs.undo(%q, { force: true }); done++; } catch (e) { refused++; }
  await new Promise((r) => setTimeout(r, 5));
}
for (const s of swappers) s.kill("SIGKILL");
console.log(JSON.stringify({ done, refused }));`, []string{"../.git/hooks", outside, hooksDir}[round], []string{"../.git/hooks", outside, hooksDir}[round], firstOut.RunID), time.Minute)
				t.Logf("round %d: %s", round, strings.TrimSpace(out.Stdout))
				var counts struct{ Done, Refused int }
				if err := json.Unmarshal([]byte(out.Stdout), &counts); out.ExitCode != 0 || err != nil {
					t.Fatalf("round %d: exit %d, %v\n%s%s", round, out.ExitCode, err, out.Stdout, out.Stderr)
				}
				refused += counts.Refused
			}
			// The swap must have been met, or the test tried nothing.
			if refused == 0 {
				t.Error("no undo met the swapped folder: the race was not run")
			}
			hooks, _ := os.ReadDir(filepath.Join(r.root, ".git", "hooks"))
			for _, h := range hooks {
				if !strings.HasSuffix(h.Name(), ".sample") {
					t.Errorf(".git/hooks/%s written (the undo went through the symlink)", h.Name())
				}
			}
			if left, _ := os.ReadDir(outside); len(left) > 0 {
				var names []string
				for _, e := range left {
					names = append(names, e.Name())
				}
				t.Errorf("written outside the repository: %v", names)
			}
			if _, err := os.Stat(filepath.Join(r.root, "HOOK-RAN")); err == nil {
				t.Error("a hook ran")
			}
			if got, _ := os.ReadFile(filepath.Join(r.root, ".git", "hooks", "pre-commit")); slices.Equal(got, []byte(hook)) {
				t.Error("the hook is in .git/hooks")
			}
		})
	}
}
