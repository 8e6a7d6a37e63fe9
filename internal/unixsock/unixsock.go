// Package unixsock binds and reaches Unix sockets at paths longer than a
// socket address holds (108 bytes on Linux; repositories live in long
// paths): such a path is used through /proc/self/fd, on its folder's
// descriptor. It must never change what a path names, only how it is
// reached.
package unixsock

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
)

// maxPath is what sun_path holds with room to spare.
const maxPath = 100

// Listen binds path. A long path's listener does not remove its socket
// on Close (the /proc name is gone by then): the caller removes it.
func Listen(path string) (net.Listener, error) {
	if len(path) < maxPath {
		return net.Listen("unix", path)
	}
	dir, err := os.Open(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	ln, err := net.Listen("unix", fmt.Sprintf("/proc/self/fd/%d/%s", dir.Fd(), filepath.Base(path)))
	if err != nil {
		return nil, err
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	return ln, nil
}

// Dial connects to path.
func Dial(path string) (net.Conn, error) {
	if len(path) < maxPath {
		return net.Dial("unix", path)
	}
	dir, err := os.Open(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	return net.Dial("unix", fmt.Sprintf("/proc/self/fd/%d/%s", dir.Fd(), filepath.Base(path)))
}
