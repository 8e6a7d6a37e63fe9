package execute

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"

	"github.com/omnidev/omnidev/internal/isolate"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

const (
	// killGrace is how long a program gets between SIGTERM and SIGKILL on
	// timeout or cancellation: enough to flush output and remove temporary
	// files, short enough that a cancelled call returns promptly.
	killGrace = 500 * time.Millisecond
	// pipeDrainTimeout bounds reading output after the program's process
	// group is gone. Output already in the pipes is read at once; only a
	// process that left the group (setsid) can hold a pipe open longer, and
	// it must not hold the run with it.
	pipeDrainTimeout = 500 * time.Millisecond
	// progressInterval paces Request.Progress. Twice a second keeps "at
	// least every second" true despite scheduling delays.
	progressInterval = 500 * time.Millisecond
)

// process is a started program: the leader of its own process group, its
// output being read into two captures.
//
// The runtime starts held at a gate: the runner reads one byte from stdin
// before it imports main.ts. The runtime boots (10 ms and more for Bun)
// while the worktree is recorded, and the program cannot touch a file
// before that record is complete; release opens the gate.
type process struct {
	run            *isolate.Run
	cmd            *exec.Cmd
	stdout, stderr *capture
	pipes          [2]*os.File // read ends
	readers        chan struct{}
	reading        bool     // the readers were started (launch)
	gate           *os.File // write end of the program's stdin
	released       time.Time
	// mainDone is closed once the runner's MainDone line has come through
	// both streams: main has returned and its output is all in; doneCode
	// is the exit code it returned.
	mainDone  chan struct{}
	doneCode  atomic.Int64
	doneCount atomic.Int32
}

// outcome is how a program ended.
type outcome struct {
	isolation   string
	outOfMemory bool
	exitCode    int
	timedOut    bool
	cancelled   bool
	// mainReturned: main returned while the runtime was still running (a
	// child it left behind), which was then stopped.
	mainReturned bool
	duration     time.Duration
}

// start starts prog under policy (see isolate.Isolator.Prepare), held at
// the gate until release.
func start(iso *isolate.Isolator, prog isolate.Program, policy *isolate.Policy, maxOutput int) (*process, error) {
	run, err := iso.Prepare(prog, policy)
	if err != nil {
		return nil, err
	}
	p, err := spawn(run, prog)
	if err != nil {
		return nil, err
	}
	if err := p.launch(prog, maxOutput); err != nil {
		p.abort()
		return nil, err
	}
	return p, nil
}

// spawn starts a prepared run with the pipes of its standard streams. An
// isolated run's init then sets up and waits for launch; any other run is
// the program itself, held at the gate.
func spawn(run *isolate.Run, prog isolate.Program) (*process, error) {
	p := &process{run: run, readers: make(chan struct{}, 2)}
	// Our own pipes, not cmd.StdoutPipe: exec.Cmd.Wait would wait for every
	// holder of the write ends (a grandchild left in the background), while
	// we want to reap the program, kill its group and then drain.
	var childEnds [3]*os.File // stdin, stdout, stderr
	r, w, err := os.Pipe()
	if err != nil {
		run.Discard()
		return nil, fmt.Errorf("create input pipe: %w", err)
	}
	p.gate, childEnds[0] = w, r
	for i := range p.pipes {
		r, w, err := os.Pipe()
		if err != nil {
			run.Discard()
			p.closePipes(childEnds[:i+1])
			return nil, fmt.Errorf("create output pipe: %w", err)
		}
		p.pipes[i], childEnds[i+1] = r, w
	}
	err = p.startCmd(childEnds)
	if fallback, ok := run.Fallback(prog, err); err != nil && ok {
		p.run = fallback
		err = p.startCmd(childEnds)
	}
	// The child holds its own copies; ours would keep the pipes open forever.
	for _, f := range childEnds {
		f.Close()
	}
	if err != nil {
		p.closePipes(nil)
		return nil, p.run.StartError(prog, err)
	}
	p.cmd = p.run.Cmd()
	if err := p.run.Started(); err != nil {
		p.abort()
		return nil, err
	}
	return p, nil
}

// launch starts prog in a spawned run and reads its output from now on.
func (p *process) launch(prog isolate.Program, maxOutput int) error {
	if err := p.run.Launch(prog); err != nil {
		return err
	}
	p.stdout, p.stderr = newCapture(maxOutput), newCapture(maxOutput)
	p.mainDone = make(chan struct{})
	seen := func(code int) {
		p.doneCode.Store(int64(code))
		if p.doneCount.Add(1) == 2 {
			close(p.mainDone)
		}
	}
	p.reading = true
	go p.read(p.pipes[0], &doneScanner{w: p.stdout, seen: seen})
	go p.read(p.pipes[1], &doneScanner{w: p.stderr, seen: seen})
	return nil
}

func (p *process) startCmd(childEnds [3]*os.File) error {
	cmd := p.run.Cmd()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = childEnds[0], childEnds[1], childEnds[2]
	return cmd.Start()
}

// read copies one pipe into its capture until EOF or until wait sets a
// deadline, never stopping early: a program blocked on a full pipe would
// hang.
func (p *process) read(r *os.File, s *doneScanner) {
	io.Copy(s, r)
	s.flush()
	p.readers <- struct{}{}
}

func (p *process) closePipes(extra []*os.File) {
	for _, f := range append(p.pipes[:], p.gate) {
		if f != nil {
			f.Close()
		}
	}
	for _, f := range extra {
		f.Close()
	}
}

// release opens the gate: the runner goes on to import main.ts. Closing
// stdin after the byte leaves the program an empty stdin, as /dev/null
// would. A runtime that already died makes the write fail, which wait
// will report.
func (p *process) release() {
	p.released = time.Now()
	p.gate.Write([]byte{1})
	p.gate.Close()
}

// abort kills a program that was never released and releases everything.
func (p *process) abort() {
	p.run.Kill()
	p.cmd.Wait()
	p.drain()
	p.run.Finish()
}

// wait supervises the released program until it exits: it stops the
// program's group on timeout (counted from release) or when ctx is done
// (SIGTERM, then SIGKILL after killGrace), reports progress, and once the
// program has exited kills whatever it left running in its group and
// drains the output.
func (p *process) wait(ctx context.Context, timeout time.Duration, progress func(Progress)) outcome {
	pid := p.cmd.Process.Pid
	exited := make(chan struct{})
	go func() {
		waitExited(pid)
		close(exited)
	}()
	// Progress is delivered on its own goroutine so that a slow callback (a
	// client not reading its notifications) cannot delay a kill. The channel
	// is unbuffered: a report due while the previous one is still being
	// delivered is skipped, not queued to arrive stale.
	reports := make(chan Progress)
	var delivering sync.WaitGroup
	if progress != nil {
		delivering.Go(func() {
			for r := range reports {
				progress(r)
			}
		})
	}

	var o outcome
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	ticker := time.NewTicker(progressInterval)
	defer ticker.Stop()
	var grace <-chan time.Time
	done := ctx.Done()
	mainDone := p.mainDone
	stop := func() {
		p.run.Signal(syscall.SIGTERM)
		grace = time.After(killGrace)
		deadline.Stop()
		done = nil
	}
wait:
	for {
		select {
		case <-exited:
			break wait
		case <-deadline.C:
			o.timedOut = true
			stop()
		case <-done:
			o.cancelled = true
			stop()
		case <-mainDone:
			// main has returned: what the program left running ends as
			// after a timeout, but the run is not one.
			mainDone = nil
			if grace == nil {
				o.mainReturned = true
				stop()
			}
		case <-grace:
			p.run.Kill()
			grace = nil
		case <-ticker.C:
			select {
			case reports <- Progress{Elapsed: time.Since(p.released), StdoutBytes: p.stdout.Len(), StderrBytes: p.stderr.Len()}:
			default:
			}
		}
	}
	o.duration = time.Since(p.released)
	// The leader has exited but is not reaped yet, so its pid - the group's
	// id - cannot be reused: killing the group now cannot hit a stranger.
	p.run.Kill()
	p.cmd.Wait()
	p.drain()
	rep := p.run.Finish()
	o.isolation, o.outOfMemory = rep.Isolation, rep.OutOfMemory
	if rep.Notice != "" {
		p.stderr.Write([]byte("\n" + rep.Notice + "\n"))
	}
	// No report may arrive after the run: wait for the one in flight.
	close(reports)
	delivering.Wait()

	st := p.cmd.ProcessState
	switch ws, _ := st.Sys().(syscall.WaitStatus); {
	case o.timedOut || o.cancelled:
		o.exitCode = -1
	case o.mainReturned:
		o.exitCode = int(p.doneCode.Load())
	case ws.Signaled():
		// As a shell reports it: 128 + the signal that killed the program.
		o.exitCode = 128 + int(ws.Signal())
	default:
		o.exitCode = st.ExitCode()
	}
	return o
}

// drain waits for both readers to reach the end of their pipes, which
// happens as soon as every process holding a write end is gone; a holder
// outside the killed group gets pipeDrainTimeout.
func (p *process) drain() {
	if !p.reading {
		p.closePipes(nil)
		return
	}
	timeout := time.After(pipeDrainTimeout)
	for pending := len(p.pipes); pending > 0; pending-- {
		select {
		case <-p.readers:
		case <-timeout:
			for _, f := range p.pipes {
				f.SetReadDeadline(time.Now())
			}
			<-p.readers
		}
	}
	p.closePipes(nil)
}
