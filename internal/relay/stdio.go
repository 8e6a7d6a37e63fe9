package relay

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxFrameBytes bounds one JSON-RPC message from a stdio server. It is
// above MaxResultBytes so that a result at the cap still arrives (and one
// over it is refused by our check, with a message, instead of ending the
// session as the SDK does with a frame over its limit).
const maxFrameBytes = 2 * MaxResultBytes

// startStdio starts cmd with its stdin and stdout on pipes that omnidev
// alone holds, and returns the transport over them. (mcp.CommandTransport
// does the same with the SDK's 16 MiB frame limit, which a 16 MiB result
// plus its envelope exceeds.) Closing the transport closes the server's
// stdin, waits terminateGrace for it to exit, then kills its process group.
func startStdio(cmd *exec.Cmd) (mcp.Transport, func(), error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, nil, err
	}
	cmd.Stdin, cmd.Stdout = inR, outW
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, nil, err
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	stop := sync.OnceFunc(func() {
		inW.Close()
		select {
		case <-exited:
		case <-time.After(terminateGrace):
			signalGroup(cmd, syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(terminateGrace):
			}
		}
		killGroup(cmd) // what the server started, and the server if it still runs
		<-exited
	})
	w := &stdinCloser{File: inW, stop: stop}
	return &mcp.IOTransport{Reader: outR, Writer: w, MaxLineLength: maxFrameBytes}, stop, nil
}

// stdinCloser is the server's stdin; closing it stops the server.
type stdinCloser struct {
	*os.File
	stop func()
}

func (w *stdinCloser) Close() error {
	w.stop()
	return nil
}

func (w *stdinCloser) String() string { return fmt.Sprintf("stdin of %s", w.Name()) }
