package engine

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// TestPIDFileNamesAnotherServer: a PID file that names a live omnidev
// process of another repository (a clone's author can plant one, and stop
// would end that process) is stale for this one; the same process is this
// repository's server when it works in it.
func TestPIDFileNamesAnotherServer(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	// A process whose name says omnidev, as the user's server of another
	// repository would.
	fake := filepath.Join(t.TempDir(), "omnidev")
	data, err := os.ReadFile(sleep)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(fake, data, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		cwd     string // "" : the repository
		running bool
	}{
		{"another repository's", t.TempDir(), false},
		{"this repository's", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			cmd := exec.Command(fake, "60")
			cmd.Dir = tc.cwd
			if cmd.Dir == "" {
				cmd.Dir = root
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
			os.MkdirAll(filepath.Join(root, ".omni"), 0o755)
			if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(PIDFileName)), []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			st, err := ReadServerStatus(root)
			if err != nil {
				t.Fatal(err)
			}
			if st.Running != tc.running {
				t.Errorf("Running = %v, want %v", st.Running, tc.running)
			}
		})
	}
}
