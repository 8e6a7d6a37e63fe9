//go:build !linux

package relay

import (
	"os/exec"
	"syscall"
)

// setProcessGroup does nothing here: without Linux's parent-death signal a
// server outlives an omnidev killed with SIGKILL (a graceful stop still
// closes it).
func setProcessGroup(*exec.Cmd) {}

func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		cmd.Process.Kill()
	}
}

func signalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	if cmd.Process != nil {
		cmd.Process.Signal(sig)
	}
}
