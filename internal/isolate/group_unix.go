//go:build !linux && !windows

package isolate

import (
	"os"
	"syscall"
)

// sysProcAttr starts the program as the leader of a new process group.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// group is the program's process group, whose id is the program's pid.
type group struct{}

func (group) join(*os.Process) error { return nil }

func (group) signal(p *os.Process, sig syscall.Signal) { syscall.Kill(-p.Pid, sig) }

func (group) kill(p *os.Process) { syscall.Kill(-p.Pid, syscall.SIGKILL) }

func (group) release() {}
