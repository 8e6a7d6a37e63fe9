//go:build linux

package execute

import "golang.org/x/sys/unix"

// waitExited blocks until the process pid has exited, without reaping it.
func waitExited(pid int) {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return
		}
	}
}
