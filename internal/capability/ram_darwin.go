package capability

import "golang.org/x/sys/unix"

// totalRAM returns the machine's memory in bytes, 0 when unknown.
func totalRAM() int64 {
	n, err := unix.SysctlUint64("hw.memsize")
	if err != nil {
		return 0
	}
	return int64(n)
}
