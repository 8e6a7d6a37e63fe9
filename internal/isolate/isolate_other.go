//go:build !linux

package isolate

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"
)

// notHere is why a run is not isolated on this system.
var notHere = runtime.GOOS + " has no namespaces: the filesystem, process, /proc and network isolation and the memory and processes limits are not enforced"

// Isolator starts runs.
type Isolator struct{}

// New returns an Isolator.
func New() *Isolator { return &Isolator{} }

// NewWithInit returns an Isolator; there is no init to start here.
func NewWithInit(string) *Isolator { return &Isolator{} }

// InitPath returns "": there is no init here.
func (iso *Isolator) InitPath() (path, problem string) { return "", "" }

// Init is only reached on Linux.
func Init() int {
	fmt.Fprintf(os.Stderr, "omnidev: %s is only used on Linux\n", InitArg)
	return 2
}

// Run is one program being started or run (see the Linux version).
type Run struct {
	cmd    *exec.Cmd
	reason string
	// group holds the program and what it starts, to be killed together:
	// a process group, or a job object on Windows.
	group group
}

// Prepare returns the run of prog: on this system, always on the host, in
// its own process group (a job object on Windows). A program that must run
// without network cannot.
func (iso *Isolator) Prepare(prog Program, p *Policy) (*Run, error) {
	if !prog.Network {
		return nil, fmt.Errorf("%w: %s; set network = true in [sandbox]", ErrNetworkIsolation, notHere)
	}
	env := prog.Env
	if env == nil {
		env = []string{}
	}
	reason := "isolation is off"
	if p != nil {
		reason = notHere
	}
	return &Run{reason: reason, cmd: &exec.Cmd{
		Path:        prog.Path,
		Args:        append([]string{prog.Path}, prog.Args...),
		Dir:         prog.Dir,
		Env:         env,
		SysProcAttr: sysProcAttr(),
	}}, nil
}

// Discard releases a run that was never started.
func (r *Run) Discard() { r.group.release() }

// Serve does nothing here: nothing is prepared in advance.
func (r *Run) Serve(*Run) {}

// Cmd returns the command to start.
func (r *Run) Cmd() *exec.Cmd { return r.cmd }

// Fallback has nothing to fall back to here.
func (r *Run) Fallback(Program, error) (*Run, bool) { return nil, false }

// StartError turns a failed start into the error to return.
func (r *Run) StartError(prog Program, err error) error {
	return fmt.Errorf("start %s: %w", prog.Path, err)
}

// Started puts the started program in its group, where that takes a step
// of its own; a failure is reported by Finish, the run goes on.
func (r *Run) Started() error {
	if err := r.group.join(r.cmd.Process); err != nil {
		r.reason += "; " + err.Error()
	}
	return nil
}

// Key is empty: nothing is set up in advance here.
func (r *Run) Key() string { return "" }

// Launch has nothing to do here: the command is the program.
func (r *Run) Launch(Program) error { return nil }

// Ready has nothing to wait for here.
func (r *Run) Ready() error { return nil }

// Signal signals the program's group.
func (r *Run) Signal(sig syscall.Signal) { r.group.signal(r.cmd.Process, sig) }

// Kill kills the program's group.
func (r *Run) Kill() { r.group.kill(r.cmd.Process) }

// Finish releases the group and reports that the run was not isolated, and
// why.
func (r *Run) Finish() Report {
	r.group.release()
	return Report{Isolation: "none: " + r.reason}
}
