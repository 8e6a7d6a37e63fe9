package server_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omnidev/omnidev/internal/execute"
)

// TestEndToEndCallLog: the result lists the wrapped tools a program called,
// in its order, with their timing, the failed ones marked with a one-line
// error, at most execute.MaxListedCalls of them; omnidev exec prints a line
// per call.
func TestEndToEndCallLog(t *testing.T) {
	root := wrappedRepo(t)
	bin := buildTestServer(t)
	writeFile(t, root, "omni/config.toml", "[capabilities]\nenable = [\"everything\", \"bad\"]\n")
	writeFile(t, root, "omni/capabilities/bad/capability.toml", "[capability]\nid = \"bad\"\n[mcp]\ncommand = \""+bin+"\"\n")
	writeFile(t, root, "prog.ts", `import { echo, getSum, call } from "everything";
import { fail, sleep } from "bad";
await echo({ message: "first" });
await getSum({ a: 1, b: 2 });
try { await call("get-structured-content", { location: "Paris" }); } catch {}
try { await fail(); } catch {}
await sleep({ ms: 120 });
for (let i = 0; i < 60; i++) await echo({ message: "m" + i });
`)
	cmd := exec.Command(binary, "exec", "--json", "prog.ts")
	cmd.Dir = root
	out, err := cmd.Output()
	var res execute.Result
	if jerr := json.Unmarshal(out, &res); jerr != nil {
		t.Fatalf("omnidev exec --json: %v %v\n%s", err, jerr, out)
	}
	if res.ExitCode != 0 {
		t.Fatalf("exit %d\n%s", res.ExitCode, res.Stderr)
	}
	total := 5 + 60
	if len(res.Calls) != execute.MaxListedCalls || res.CallsOmitted != total-execute.MaxListedCalls {
		t.Fatalf("%d calls listed, %d omitted; want %d and %d", len(res.Calls), res.CallsOmitted, execute.MaxListedCalls, total-execute.MaxListedCalls)
	}
	want := []struct {
		capability, tool string
		ok               bool
		err              string
	}{
		{"everything", "echo", true, ""},
		{"everything", "get-sum", true, ""},
		{"everything", "get-structured-content", false, "Input validation error"},
		{"bad", "fail", false, "the widget is broken"},
		{"bad", "sleep", true, ""},
		{"everything", "echo", true, ""},
	}
	for i, w := range want {
		c := res.Calls[i]
		if c.Capability != w.capability || c.Tool != w.tool || c.OK != w.ok || !strings.Contains(c.Error, w.err) || strings.Contains(c.Error, "\n") {
			t.Errorf("call %d = %+v, want %s.%s ok=%v error containing %q", i, c, w.capability, w.tool, w.ok, w.err)
		}
	}
	if ms := res.Calls[4].MS; ms < 100 {
		t.Errorf("sleep of 120 ms took %d ms", ms)
	}

	cmd = exec.Command(binary, "exec", "prog.ts")
	cmd.Dir = root
	human, _ := cmd.CombinedOutput()
	for _, w := range []string{"call everything.get-sum ", "call bad.fail ", "failed: the widget is broken", "... and 15 more calls"} {
		if !strings.Contains(string(human), w) {
			t.Errorf("omnidev exec output lacks %q:\n%s", w, human)
		}
	}
}

// TestEndToEndTypeCheck: a program that calls a wrapped tool with a wrong
// argument name is reported at its line; in "error" mode it does not run
// (no file written, no tool called), in "warn" mode it runs all the same.
func TestEndToEndTypeCheck(t *testing.T) {
	root := wrappedRepo(t)
	writeFile(t, root, "prog.ts", `import { writeFileSync } from "node:fs";
import { echo } from "everything";

writeFileSync("ran.txt", "ran\n");
console.log((await echo({ mesage: "typo" })).text);
`)
	exec1 := func(mode string) execute.Result {
		t.Helper()
		cmd := exec.Command(binary, "exec", "--json", "--typecheck", mode, "prog.ts")
		cmd.Dir = root
		out, err := cmd.Output()
		var res execute.Result
		if jerr := json.Unmarshal(out, &res); jerr != nil {
			t.Fatalf("omnidev exec --typecheck %s: %v %v\n%s", mode, err, jerr, out)
		}
		if res.TypeCheck != "errors" || len(res.TypeErrors) != 1 || res.TypeErrors[0].Line != 5 || !strings.Contains(res.TypeErrors[0].Message, "mesage") {
			t.Fatalf("--typecheck %s: typecheck %q, type_errors %+v; want one at line 5 naming mesage", mode, res.TypeCheck, res.TypeErrors)
		}
		return res
	}
	res := exec1("error")
	if res.ExitCode != -1 || len(res.Calls) != 0 || !strings.Contains(res.Stderr, "not run") {
		t.Errorf("--typecheck error ran the program: exit %d, calls %+v, stderr %q", res.ExitCode, res.Calls, res.Stderr)
	}
	if _, err := os.Stat(filepath.Join(root, "ran.txt")); err == nil {
		t.Error("--typecheck error: the program wrote ran.txt")
	}
	res = exec1("warn")
	if len(res.Calls) != 1 || res.Calls[0].Tool != "echo" || res.Calls[0].OK {
		t.Errorf("--typecheck warn: calls %+v, want the failed echo", res.Calls)
	}
	if _, err := os.Stat(filepath.Join(root, "ran.txt")); err != nil {
		t.Error("--typecheck warn: the program did not run")
	}
}
