//go:build linux

package execute

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omnidev/omnidev/internal/isolate"
)

// TestIsolatedRunsShareNothing runs isolated programs one after another,
// the later ones in sandboxes prepared in advance, and checks that each
// gets a fresh one: its own /tmp, PID namespace and view, and that a
// change of isolation is honoured rather than served from the prepared one.
func TestIsolatedRunsShareNothing(t *testing.T) {
	requireBun(t)
	root := t.TempDir()
	sb := prepare(t, root)
	e := New(root, nil)
	t.Cleanup(func() { e.Close() })
	// With the filesystem on the host, the file lands in the host's /tmp.
	left := "/tmp/" + filepath.Base(filepath.Dir(root)) + "-left-behind"
	t.Cleanup(func() { os.Remove(left) })
	code := `import { existsSync, writeFileSync, readdirSync } from "node:fs";
console.log(existsSync("` + left + `") ? "stale" : "fresh");
writeFileSync("` + left + `", "x");
console.log(readdirSync("/proc").filter(p => /^\d+$/.test(p)).length <= 3 ? "own-pids" : "shared-pids");
try { writeFileSync(".omni/x", "x"); console.log("omni-writable"); } catch { console.log("omni-read-only"); }`
	isolated := &isolate.Policy{Filesystem: true, MemoryBytes: 1 << 30, Processes: 128}
	host := &isolate.Policy{}
	tests := []struct {
		name   string
		policy *isolate.Policy
		want   string
	}{
		{"first", isolated, "fresh\nown-pids\nomni-read-only\n"},
		{"second, prepared in advance", isolated, "fresh\nown-pids\nomni-read-only\n"},
		{"third", isolated, "fresh\nown-pids\nomni-read-only\n"},
		{"filesystem on the host now", host, "fresh\nown-pids\nomni-writable\n"},
		{"isolated again", isolated, "fresh\nown-pids\nomni-read-only\n"},
	}
	for _, tt := range tests {
		req := request(sb, code)
		req.Isolation = tt.policy
		res, err := e.Run(t.Context(), req)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if res.Stdout != tt.want || !strings.HasPrefix(res.Isolation, "namespaces") {
			t.Errorf("%s: stdout %q, isolation %q; want %q", tt.name, res.Stdout, res.Isolation, tt.want)
		}
	}
}
