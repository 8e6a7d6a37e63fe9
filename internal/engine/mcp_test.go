package engine

import (
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/omnidev/omnidev/internal/relay"
	"github.com/omnidev/omnidev/internal/testrepo"
)

// TestReloadStopsAndRestartsWrappedServers: a reload that changes a wrapped
// capability restarts its server, one that disables it stops it, and Close
// stops what is left.
func TestReloadStopsAndRestartsWrappedServers(t *testing.T) {
	bin := testrepo.TestServer(t)
	root := t.TempDir()
	pidFile := filepath.Join(t.TempDir(), "pid")
	write := func(rel, content string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	manifest := func(flavour string) string {
		return "[capability]\nid = \"bad\"\n[mcp]\ncommand = \"" + bin + "\"\nenv = { PID_FILE = \"" + pidFile + "\", FLAVOUR = \"" + flavour + "\" }\n"
	}
	write("omni/config.toml", "[capabilities]\nenable = [\"bad\"]\n")
	write("omni/capabilities/bad/capability.toml", manifest("one"))
	newRelay := func(environ []string, logger *slog.Logger, onChange func(string)) Relay {
		return relay.New(relay.Options{Environ: environ, Logger: logger, OnChange: onChange})
	}
	e, err := Open(t.Context(), root, Options{Environ: os.Environ(), NewRelay: newRelay})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()

	// serverPID waits for a server other than old to have written its pid.
	serverPID := func(old int) int {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			data, _ := os.ReadFile(pidFile)
			if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && pid != old {
				return pid
			}
			if time.Now().After(deadline) {
				t.Fatalf("no new wrapped server started (last pid %d)", old)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitGone := func(pid int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for syscall.Kill(pid, 0) == nil {
			if time.Now().After(deadline) {
				t.Fatalf("server %d still runs", pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	first := serverPID(0)
	write("omni/capabilities/bad/capability.toml", manifest("two"))
	if err := e.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	second := serverPID(first)
	waitGone(first)

	write("omni/config.toml", "[capabilities]\nenable = []\n")
	if err := e.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	waitGone(second)
	if ws := e.WrappedServers(); len(ws) != 0 {
		t.Errorf("wrapped servers after disabling: %+v", ws)
	}

	write("omni/config.toml", "[capabilities]\nenable = [\"bad\"]\n")
	if err := e.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	third := serverPID(second)
	e.Close()
	waitGone(third)
}
