package relay

import (
	"os/exec"
	"syscall"
)

// setProcessGroup puts a stdio server in its own process group (npx and
// shell wrappers start the real server as a child; killing the group ends
// both) and has the kernel send it SIGTERM when omnidev dies, even by
// SIGKILL.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}

// killGroup kills what is left of the server's process group.
func killGroup(cmd *exec.Cmd) { signalGroup(cmd, syscall.SIGKILL) }

func signalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, sig)
	}
}
