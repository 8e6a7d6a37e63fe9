package main

import (
	"os"

	"golang.org/x/sys/windows"
)

// askToStop ends the process pid. Windows has no signal one process can
// send another to ask it to stop, so the server is terminated without its
// graceful shutdown: its PID file stays behind, and status then says the
// process is gone.
func askToStop(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}

// processExists reports whether the process pid is still running.
func processExists(pid int) bool {
	h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(pid))
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	ev, err := windows.WaitForSingleObject(h, 0)
	return err == nil && ev == uint32(windows.WAIT_TIMEOUT)
}
