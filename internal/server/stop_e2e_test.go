package server_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/omnidev/omnidev/internal/testrepo"
)

// TestEndToEndStopDuringRun: `omnidev stop` while a program runs lets the
// run finish (within a short grace, else cancels it), answers the call with
// its result and change report, then exits without logging an error.
func TestEndToEndStopDuringRun(t *testing.T) {
	for _, tt := range []struct {
		name          string
		tail          string // after the program wrote its file
		wantCancelled bool
	}{
		{"finishes within the grace", `await new Promise((r) => setTimeout(r, 800)); console.log("done");`, false},
		{"cancelled after the grace", `await new Promise(() => {});`, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := fixtureRepo(t)
			s := startServer(t, root)
			code := `import { mkdirSync, writeFileSync } from "node:fs";
mkdirSync("out", { recursive: true });
writeFileSync("out/result.txt", "written\n");
writeFileSync(".omni/state/started", "1");
` + tt.tail
			type reply struct {
				res *mcp.CallToolResult
				err error
			}
			replies := make(chan reply, 1)
			go func() {
				res, err := s.session.CallTool(t.Context(), &mcp.CallToolParams{Name: "omni_execute", Arguments: map[string]any{"code": code}})
				replies <- reply{res, err}
			}()
			deadline := time.Now().Add(20 * time.Second)
			for {
				if _, err := os.Stat(filepath.Join(root, ".omni", "state", "started")); err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the program did not start within 20s")
				}
				time.Sleep(20 * time.Millisecond)
			}
			stop := exec.Command(binary, "--dir", root, "stop")
			if out, err := stop.CombinedOutput(); err != nil || !strings.Contains(string(out), "stopped server") {
				t.Errorf("omnidev stop: %v\n%s", err, out)
			}
			r := <-replies
			if r.err != nil {
				t.Fatalf("the call got no answer: %v", r.err)
			}
			data, err := json.Marshal(r.res.StructuredContent)
			if err != nil {
				t.Fatal(err)
			}
			var res struct {
				Stdout    string
				Cancelled bool
				Changes   []struct{ Path string }
			}
			if err := json.Unmarshal(data, &res); err != nil {
				t.Fatal(err)
			}
			if res.Cancelled != tt.wantCancelled || (!tt.wantCancelled && !strings.Contains(res.Stdout, "done")) {
				t.Errorf("cancelled %v (want %v), stdout %q", res.Cancelled, tt.wantCancelled, res.Stdout)
			}
			if len(res.Changes) != 1 || res.Changes[0].Path != "out/result.txt" {
				t.Errorf("changes %+v, want out/result.txt", res.Changes)
			}
			testrepo.WaitFor(t, "the server to exit", 10*time.Second, func() bool { return !testrepo.Alive(s.cmd.Process.Pid) })
			if log := s.stderr.String(); strings.Contains(log, "level=ERROR") {
				t.Errorf("a normal stop logged an error:\n%s", log)
			}
		})
	}
}
