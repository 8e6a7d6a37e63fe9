package server_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/omnidev/omnidev/internal/testrepo"
)

// TestEndToEndMainReturns: when main returns, the run is over although the
// program left a child running (a spawn without unref): its output is
// complete, its exit code is main's, its files are reported, it did not
// time out, and the child is gone.
func TestEndToEndMainReturns(t *testing.T) {
	root := fixtureRepo(t)
	s := startServer(t, root)
	marker := fmt.Sprintf("600.%09d", time.Now().UnixNano()%1e9)
	code := fmt.Sprintf(`import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
export async function main() {
  spawn("sleep", [%q], { stdio: "inherit" });
  for (let i = 0; i < 400; i++) console.log("line " + i); // within the 5 KiB default cap
  console.error("to stderr");
  mkdirSync("out", { recursive: true });
  writeFileSync("out/left.txt", "written\n");
  return 3;
}`, marker)
	var res struct {
		ExitCode   int    `json:"exit_code"`
		Stdout     string `json:"stdout"`
		Stderr     string `json:"stderr"`
		TimedOut   bool   `json:"timed_out"`
		DurationMS int64  `json:"duration_ms"`
		Changes    []struct{ Path string }
	}
	start := time.Now()
	s.call(t, t.Context(), "omni_execute", map[string]any{"code": code, "timeout_ms": 20000}, &res)
	if took := time.Since(start); took > 10*time.Second || res.TimedOut {
		t.Errorf("the run took %v, timed_out %v: it did not end when main returned", took, res.TimedOut)
	}
	if res.ExitCode != 3 {
		t.Errorf("exit_code %d, want 3 (main's)", res.ExitCode)
	}
	if !strings.HasSuffix(res.Stdout, "line 399\n") || strings.Count(res.Stdout, "\n") != 400 || strings.TrimSpace(res.Stderr) != "to stderr" {
		t.Errorf("output incomplete or not the program's: stdout ends %q (%d lines), stderr %q",
			res.Stdout[max(0, len(res.Stdout)-40):], strings.Count(res.Stdout, "\n"), res.Stderr)
	}
	if len(res.Changes) != 1 || res.Changes[0].Path != "out/left.txt" {
		t.Errorf("changes %+v, want out/left.txt", res.Changes)
	}
	testrepo.WaitFor(t, "the child the program left to be gone", 5*time.Second, func() bool {
		return len(processesRunning("sleep", marker)) == 0
	})
}
