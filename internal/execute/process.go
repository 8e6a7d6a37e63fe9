package execute

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
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
	cmd            *exec.Cmd
	stdout, stderr *capture
	pipes          [2]*os.File // read ends
	readers        chan struct{}
	gate           *os.File // write end of the program's stdin
	released       time.Time
}

// outcome is how a program ended.
type outcome struct {
	exitCode  int
	timedOut  bool
	cancelled bool
	duration  time.Duration
}

// start starts path with args in dir, with exactly env, in a new process
// group (and new user and network namespaces when network is false), held
// at the gate until release.
func start(path string, args []string, dir string, env []string, network bool, maxOutput int) (*process, error) {
	if env == nil {
		// exec.Cmd reads a nil Env as "inherit the server's environment".
		env = []string{}
	}
	cmd := &exec.Cmd{
		Path: path,
		Args: append([]string{path}, args...),
		Dir:  dir,
		Env:  env,
		SysProcAttr: &syscall.SysProcAttr{
			Setpgid: true,
			// A last resort should the server die without cleaning up (the
			// group kill in wait is what normally ends everything). The
			// kernel sends it when the thread that forked exits; Go only
			// retires a thread when a goroutine locked to it exits, which
			// nothing in this process does.
			Pdeathsig: syscall.SIGKILL,
		},
	}
	if !network {
		isolateNetwork(cmd.SysProcAttr)
	}
	p := &process{
		cmd:     cmd,
		stdout:  newCapture(maxOutput),
		stderr:  newCapture(maxOutput),
		readers: make(chan struct{}, 2),
	}
	// Our own pipes, not cmd.StdoutPipe: exec.Cmd.Wait would wait for every
	// holder of the write ends (a grandchild left in the background), while
	// we want to reap the program, kill its group and then drain.
	var childEnds [3]*os.File // stdin, stdout, stderr
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("create input pipe: %w", err)
	}
	p.gate, childEnds[0] = w, r
	for i := range p.pipes {
		r, w, err := os.Pipe()
		if err != nil {
			p.closePipes(childEnds[:i+1])
			return nil, fmt.Errorf("create output pipe: %w", err)
		}
		p.pipes[i], childEnds[i+1] = r, w
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = childEnds[0], childEnds[1], childEnds[2]
	err = cmd.Start()
	// The child holds its own copies; ours would keep the pipes open forever.
	for _, f := range childEnds {
		f.Close()
	}
	if err != nil {
		p.closePipes(nil)
		if !network && isNamespaceRefusal(err) {
			return nil, fmt.Errorf("%w: the kernel refused to create user and network namespaces (%v); "+
				"allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 24.04 and later "+
				"kernel.apparmor_restrict_unprivileged_userns=0) or set network = true in [sandbox]", ErrNetworkIsolation, err)
		}
		return nil, fmt.Errorf("start %s: %w", path, err)
	}
	go p.read(p.pipes[0], p.stdout)
	go p.read(p.pipes[1], p.stderr)
	return p, nil
}

// isolateNetwork puts the program in new user and network namespaces. The
// network namespace has only a loopback interface, down, so every connection
// fails at once (ENETUNREACH) - 127.0.0.1 included, which would otherwise
// reach services on the host. The user namespace is what lets an
// unprivileged server create the network one; mapping our own ids keeps
// file ownership and permissions as they are outside.
func isolateNetwork(attr *syscall.SysProcAttr) {
	attr.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET
	attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
	attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
	// Writing gid_map unprivileged requires setgroups to be denied.
	attr.GidMappingsEnableSetgroups = false
}

// isNamespaceRefusal reports whether a start error is the kernel refusing
// the namespaces: EPERM or EACCES when unprivileged user namespaces are
// disabled or restricted (AppArmor, SELinux), ENOSPC or EUSERS when a
// namespace quota is reached, EINVAL or ENOSYS when the kernel lacks them.
// A missing program (ENOENT) is not one; a program that cannot be executed
// would also give EACCES, but Run only starts what LookupRuntime found
// executable.
func isNamespaceRefusal(err error) bool {
	for _, errno := range []error{syscall.EPERM, syscall.EACCES, syscall.ENOSPC, syscall.EUSERS, syscall.EINVAL, syscall.ENOSYS} {
		if errors.Is(err, errno) {
			return true
		}
	}
	return false
}

// read copies one pipe into its capture until EOF or until wait sets a
// deadline, never stopping early: a program blocked on a full pipe would
// hang.
func (p *process) read(r *os.File, c *capture) {
	io.Copy(c, r)
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
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	p.cmd.Wait()
	p.drain()
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
	stop := func() {
		syscall.Kill(-pid, syscall.SIGTERM)
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
		case <-grace:
			syscall.Kill(-pid, syscall.SIGKILL)
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
	syscall.Kill(-pid, syscall.SIGKILL)
	p.cmd.Wait()
	p.drain()
	// No report may arrive after the run: wait for the one in flight.
	close(reports)
	delivering.Wait()

	st := p.cmd.ProcessState
	switch ws, _ := st.Sys().(syscall.WaitStatus); {
	case o.timedOut || o.cancelled:
		o.exitCode = -1
	case ws.Signaled():
		// As a shell reports it: 128 + the signal that killed the program.
		o.exitCode = 128 + int(ws.Signal())
	default:
		o.exitCode = st.ExitCode()
	}
	return o
}

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

// drain waits for both readers to reach the end of their pipes, which
// happens as soon as every process holding a write end is gone; a holder
// outside the killed group gets pipeDrainTimeout.
func (p *process) drain() {
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
