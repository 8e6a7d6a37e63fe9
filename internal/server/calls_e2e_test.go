package server_test

import (
	"encoding/json"
	"os/exec"
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
