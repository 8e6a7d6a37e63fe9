//go:build linux

package isolate

import (
	"fmt"
	"io"
	"net"
	"strconv"
	"sync/atomic"

	"github.com/omnidev/omnidev/internal/unixsock"
	"golang.org/x/sys/unix"
)

// bridge is the init's listener on the run's loopback; target is the
// egress proxy's socket, known once the program is launched.
type bridge struct {
	target atomic.Pointer[string]
}

// bridgeEgress brings the run's loopback up and serves 127.0.0.1:EgressPort
// there, handing each connection to the egress proxy's Unix socket: the
// one way out of a network namespace that has nothing else. It runs in the
// init, whose goroutines serve as long as the run lives.
func bridgeEgress() (*bridge, error) {
	b := &bridge{}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return nil, err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return nil, fmt.Errorf("read the loopback's flags: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return nil, fmt.Errorf("bring the loopback up: %w", err)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(EgressPort)))
	if err != nil {
		return nil, err
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				var up net.Conn
				err := fmt.Errorf("no program launched")
				if socket := b.target.Load(); socket != nil {
					up, err = unixsock.Dial(*socket)
				}
				if err != nil {
					io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 38\r\nConnection: close\r\n\r\nomnidev's egress proxy is not running\n")
					return
				}
				defer up.Close()
				done := make(chan struct{}, 2)
				go func() { io.Copy(up, c); up.(*net.UnixConn).CloseWrite(); done <- struct{}{} }()
				go func() { io.Copy(c, up); c.(*net.TCPConn).CloseWrite(); done <- struct{}{} }()
				<-done
				<-done
			}()
		}
	}()
	return b, nil
}
