package engine

import (
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
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
		for testrepo.Alive(pid) {
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

// TestOpenRemovesStaleRelaySockets: an engine that opens removes the relay
// sockets of omnidev processes that are gone (killed with -9), and keeps
// those of live processes and files that are not its sockets.
func TestOpenRemovesStaleRelaySockets(t *testing.T) {
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	live := exec.Command("sleep", "60")
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { live.Process.Kill(); live.Wait() })
	deadPID, livePID := strconv.Itoa(dead.Process.Pid), strconv.Itoa(live.Process.Pid)

	root := testrepo.CopyOmni(t)
	dir := filepath.Join(root, ".omni", "relay")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	socket := func(name string) {
		t.Helper()
		ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(dir, name), Net: "unix"})
		if err != nil {
			t.Fatal(err)
		}
		ln.SetUnlinkOnClose(false) // as kill -9 leaves it
		ln.Close()
	}
	socket(deadPID + ".sock")
	socket(livePID + ".sock")
	socket("notapid.sock")
	if err := os.WriteFile(filepath.Join(dir, deadPID+"0.sock"), nil, 0o600); err != nil {
		t.Fatal(err) // a regular file, whatever its name, is not a socket of ours
	}

	e, err := Open(t.Context(), root, Options{Environ: os.Environ(), NewRelay: newRelay})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()

	for _, tt := range []struct {
		name string
		want bool
	}{
		{deadPID + ".sock", false},
		{livePID + ".sock", true},
		{"notapid.sock", true},
		{deadPID + "0.sock", true},
		{strconv.Itoa(os.Getpid()) + ".sock", true}, // this engine's own
	} {
		_, err := os.Lstat(filepath.Join(dir, tt.name))
		if got := err == nil; got != tt.want {
			t.Errorf("%s exists: %v, want %v (%v)", tt.name, got, tt.want, err)
		}
	}
}

// newRelay is the relay cmd/omnidev composes for serve and exec.
func newRelay(environ []string, logger *slog.Logger, onChange func(string)) Relay {
	return relay.New(relay.Options{Environ: environ, Logger: logger, OnChange: onChange})
}
