package relay

import (
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
// alone holds, and returns the SDK's transport over them, with a frame
// limit of maxFrameBytes. (mcp.CommandTransport does the same with the
// SDK's 16 MiB limit, which a 16 MiB result plus its envelope exceeds, and
// without the process group.) Closing the transport closes the server's
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
	// Once the server has exited, its stderr is read for at most
	// terminateGrace more: a process it started in a session of its own
	// escapes killGroup and may hold stderr open for as long as it lives,
	// which would otherwise hold up Wait, and closing the server with it.
	cmd.WaitDelay = terminateGrace
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
	return &mcp.IOTransport{Reader: outR, Writer: stdin{inW, stop}, MaxLineLength: maxFrameBytes}, stop, nil
}

// stdin is the server's stdin; closing it stops the server (startStdio).
type stdin struct {
	*os.File
	stop func()
}

func (s stdin) Close() error {
	s.stop()
	return nil
}
