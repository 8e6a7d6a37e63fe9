//go:build unix

package typecheck

import (
	"os/exec"
	"syscall"
)

// setGroup starts tsc in its own process group and kills the group when
// the check is cancelled: tsc's launcher starts the compiler as a child.
func setGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
