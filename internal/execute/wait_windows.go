package execute

import "golang.org/x/sys/windows"

// waitExited blocks until the process pid has exited. Windows keeps its
// pid unused while the os.Process's handle is open, as a zombie does.
func waitExited(pid int) {
	h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(pid))
	if err != nil {
		return
	}
	defer windows.CloseHandle(h)
	windows.WaitForSingleObject(h, windows.INFINITE)
}
