//go:build unix

package engine

import (
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestPIDFileOfAClone checks what a cloned repository's .omni can hold
// for the PID files, which serve writes before engine.Open checks .omni: a
// FIFO for the PID file must not block (SIGTERM does not end an open of
// one), a symlink to /dev/zero must not be read without end, and a
// symlinked .omni/servers must not have its folder's files, named by
// numbers, removed as stale servers' nor a PID file written there.
func TestPIDFileOfAClone(t *testing.T) {
	logger := slog.New(slog.DiscardHandler)
	t.Run("FIFO", func(t *testing.T) {
		root := t.TempDir()
		os.Mkdir(filepath.Join(root, ".omni"), 0o755)
		if err := syscall.Mkfifo(filepath.Join(root, filepath.FromSlash(PIDFileName)), 0o644); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := ReadServerStatus(root)
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil {
				t.Fatal("a FIFO read as a PID file")
			}
		case <-time.After(5 * time.Second):
			t.Fatal("reading a FIFO PID file blocked")
		}
	})
	t.Run("dev zero", func(t *testing.T) {
		root := t.TempDir()
		os.Mkdir(filepath.Join(root, ".omni"), 0o755)
		for _, name := range []string{PIDFileName, ServerInfoFileName} {
			if err := os.Symlink("/dev/zero", filepath.Join(root, filepath.FromSlash(name))); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := ReadServerStatus(root); err == nil {
			t.Fatal("a PID file symlinked to /dev/zero was read")
		}
		if _, err := ReadServerInfo(root); err == nil {
			t.Fatal("a server.json symlinked to /dev/zero was read")
		}
	})
	t.Run("symlinked servers", func(t *testing.T) {
		root, victim := t.TempDir(), t.TempDir()
		// 2^22+1 is past Linux's largest process id: no such process.
		stale := filepath.Join(victim, "4194305")
		if err := os.WriteFile(stale, []byte("the user's\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Mkdir(filepath.Join(root, ".omni"), 0o755)
		if err := os.Symlink(victim, filepath.Join(root, filepath.FromSlash(ServersDir))); err != nil {
			t.Fatal(err)
		}
		p, err := WritePIDFile(root, logger)
		if err == nil {
			p.Remove()
			t.Error("a PID file was written through a symlinked .omni/servers")
		}
		if _, err := os.Stat(stale); err != nil {
			t.Errorf("a file of the folder .omni/servers leads to was removed: %v", err)
		}
		if _, err := os.Stat(filepath.Join(victim, strconv.Itoa(os.Getpid()))); err == nil {
			t.Error("a PID file was written in the folder .omni/servers leads to")
		}
		if servers, _ := ReadServers(root); len(servers) != 0 {
			t.Errorf("servers read through a symlinked .omni/servers: %v", servers)
		}
	})
	t.Run("symlinked .omni", func(t *testing.T) {
		root, victim := t.TempDir(), t.TempDir()
		if err := os.Symlink(victim, filepath.Join(root, ".omni")); err != nil {
			t.Fatal(err)
		}
		if p, err := WritePIDFile(root, logger); err == nil {
			p.Remove()
			t.Error("a PID file was written through a symlinked .omni")
		}
		if entries, _ := os.ReadDir(victim); len(entries) != 0 {
			t.Errorf("written in the folder .omni leads to: %v", entries)
		}
	})
}
