//go:build linux

package isolate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Isolator starts runs. It learns about the host once (the secret files to
// hide, the cgroups it may use). Safe for concurrent use.
type Isolator struct {
	// init is the program started as the namespaces' first process.
	init string
	// initOnce checks a helper init's protocol; initProblem says why the
	// helper found beside the binary is not used.
	initOnce    sync.Once
	initProblem string
	once        sync.Once
	masks       []string
	// etc is what of /etc the Landlock mode lets a program read (etcEntries).
	etc     []string
	cgroups cgroupHost
	// nsRefused says why the kernel refused user namespaces, once it did:
	// in the auto mode, later runs go straight to the Landlock mode.
	nsMu      sync.Mutex
	nsRefused string
	stuck     []string
}

// nprocLimit returns the processes limit to set as RLIMIT_NPROC: p's when
// no pids cgroup can hold it, else 0. It marks p (a copy the run keeps).
func (iso *Isolator) nprocLimit(p *Policy) int {
	if p.Processes <= 0 || iso.cgroups.pids != "" {
		return 0
	}
	p.nproc = true
	return p.Processes
}

// setStuck records protected paths a run changed that could not be put
// back: no run starts until they are gone (see checkStuck).
func (iso *Isolator) setStuck(paths []string) {
	iso.nsMu.Lock()
	defer iso.nsMu.Unlock()
	iso.stuck = append(iso.stuck, paths...)
}

// checkStuck refuses a run while a path a run planted is still there.
func (iso *Isolator) checkStuck() error {
	iso.nsMu.Lock()
	defer iso.nsMu.Unlock()
	var left []string
	for _, p := range iso.stuck {
		if _, err := os.Lstat(p); err == nil {
			left = append(left, p)
		}
	}
	iso.stuck = left
	if len(left) > 0 {
		return fmt.Errorf("%w: a run created %s, which runs may not create (omnidev's configuration, or a git folder git would run hooks from), and it could not be moved aside; remove it (rm -rf) before the next run",
			ErrIsolation, strings.Join(left, ", "))
	}
	return nil
}

func (iso *Isolator) refused() string {
	iso.nsMu.Lock()
	defer iso.nsMu.Unlock()
	return iso.nsRefused
}

// selfInit is the running binary, as the init.
const selfInit = "/proc/self/exe"

// New returns an Isolator whose init is HelperName when it is installed
// beside the running binary and speaks this build's Protocol, else the
// running binary itself.
func New() *Isolator {
	iso := &Isolator{init: selfInit}
	if self, err := os.Executable(); err == nil {
		helper := filepath.Join(filepath.Dir(self), HelperName)
		if fi, err := os.Stat(helper); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			iso.init = helper
		}
	}
	return iso
}

// NewWithInit returns an Isolator whose init is the program at path, which
// must call Init when IsInit says so.
func NewWithInit(path string) *Isolator { return &Isolator{init: path} }

// InitPath returns the path of the program started as the init, and why
// the helper beside the binary is not that program when it is not.
func (iso *Isolator) InitPath() (path, problem string) {
	iso.checkInit()
	return iso.init, iso.initProblem
}

// checkInit asks a helper init for its protocol, once: a helper left
// from another build would misread the specs (a program path it does not
// find, a view it does not set up), so the running binary serves instead.
// It costs one start of the helper (~3 ms), before the first run.
func (iso *Isolator) checkInit() {
	iso.initOnce.Do(func() {
		if iso.init == selfInit || filepath.Base(iso.init) != HelperName {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, iso.init, ProtocolArg).Output()
		got := strings.TrimSpace(string(out))
		if err == nil && got == strconv.Itoa(Protocol) {
			return
		}
		if _, nerr := strconv.Atoi(got); err != nil || nerr != nil {
			got = "none"
		}
		iso.initProblem = fmt.Sprintf("%s is from another build of omnidev (protocol %s, want %d): install both from one build", iso.init, got, Protocol)
		iso.init = selfInit
	})
}

func (iso *Isolator) learn() {
	iso.checkInit()
	iso.once.Do(func() {
		iso.masks = secretPaths()
		iso.etc = etcEntries(iso.masks)
		iso.cgroups = findCgroups()
	})
}

// initSpec is what the parent tells the init first, as JSON on fd 3: what
// to set up. The init does so at once, then waits for a launchSpec.
type initSpec struct {
	// Mode is ModeLandlock for the Landlock mode, else empty (namespaces).
	Mode string `json:"mode,omitempty"`
	// View is nil with filesystem = "host": only /proc is replaced. In the
	// Landlock mode only its rules are used.
	View *view `json:"view,omitempty"`
	// Network false denies sockets of every family but AF_UNIX (seccomp).
	Network bool `json:"network"`
	// NProc, when set, is the processes limit as RLIMIT_NPROC, where no
	// pids cgroup is available: in a user namespace of its own it counts
	// the run's processes and threads only; outside, the user's, so the
	// Landlock mode adds those the user already has.
	NProc int `json:"nproc,omitempty"`
	// Egress has the init bring the loopback up and bridge EgressPort
	// there to the egress proxy whose socket the launch spec names (see
	// Program.Egress): the socket is the run's, the sandbox is not.
	Egress bool `json:"egress,omitempty"`
}

// launchSpec is the second JSON value on fd 3: the program to start.
type launchSpec struct {
	Path string   `json:"path"`
	Args []string `json:"args"`
	Dir  string   `json:"dir"`
	Env  []string `json:"env"`
	// Egress is the egress proxy's socket (initSpec.Egress).
	Egress string `json:"egress,omitempty"`
}

// The init's extra descriptors.
const (
	specFD   = 3 // the spec, then held open by the parent until Ready
	statusFD = 4 // statusReady once the runtime started; else an error
)

// statusReady is all the init writes on its status descriptor when the
// runtime started: an init that died before says nothing, which is then
// not mistaken for success.
const statusReady = "ready"

// Run is one program being started or run. Its methods are called by one
// goroutine at a time, in order: Prepare, the caller's cmd.Start, Started,
// Launch (at once, or later for a run prepared in advance), Ready, Signal
// and Kill any number of times, Finish. Discard instead of starting.
type Run struct {
	iso      *Isolator
	cmd      *exec.Cmd
	policy   *Policy
	isolated bool
	// reason says why a run is not isolated.
	reason string
	spec   []byte
	key    string
	// inherits: the init was in the run's cgroups before it started the
	// runtime, which is then in them too.
	inherits bool
	// specW is held until Ready: the init reads its hang-up as the
	// parent's death.
	specW, statusR *os.File
	childEnds      []*os.File
	cg             *cgroup
	notEnforced    []string
	// joined is closed once the init is in the run's cgroups; cg and
	// notEnforced are read after it.
	joined chan struct{}
	mntNS  *os.File
	// root and guarded: the protected paths Finish puts back (see guard).
	root    string
	guarded []guarded
	// walls are the layers the init reported holding ("landlock", "seccomp").
	walls []string
	// mode is ModeLandlock for a run of the Landlock mode, why says why
	// that mode, and private is the run's own folder (TMPDIR and HOME).
	mode, why, private string
}

// Prepare returns the run of prog under p (nil p: on the host, which the
// report says). The caller sets the command's standard streams, starts it
// and calls Started.
func (iso *Isolator) Prepare(prog Program, p *Policy) (*Run, error) {
	if p == nil {
		return hostRun(prog, "isolation is off"), nil
	}
	iso.learn()
	if err := iso.checkStuck(); err != nil {
		return nil, err
	}
	switch p.Mode {
	case ModeNone:
		if !prog.Network {
			return nil, fmt.Errorf(`%w: [sandbox] isolation = "none" cannot keep a program off the network; set network = true or choose another isolation`, ErrNetworkIsolation)
		}
		return hostRun(prog, `[sandbox] isolation = "none"`), nil
	case ModeLandlock:
		return iso.prepareLandlock(prog, p, `[sandbox] isolation = "landlock"`)
	case ModeNamespaces:
	default:
		if why := iso.refused(); why != "" {
			return iso.prepareLandlock(prog, p, why)
		}
	}
	setDumpable(true)
	spec := initSpec{Network: prog.Network, NProc: iso.nprocLimit(p), Egress: prog.Egress != ""}
	r := &Run{iso: iso, policy: p, isolated: true, root: prog.Root}
	if p.Filesystem {
		if err := os.MkdirAll(filepath.Join(prog.Root, filepath.FromSlash(StateDir)), 0o755); err != nil {
			return nil, fmt.Errorf("create %s: %w", StateDir, err)
		}
		runtimePaths, _ := RuntimePaths(prog.Path, prog.Root, prog.Env)
		v := planView(prog, p, iso.masks, runtimePaths)
		spec.View = &v
		r.guarded = v.Guarded
	} else {
		r.notEnforced = append(r.notEnforced, `filesystem ([sandbox] filesystem = "host")`)
	}
	data, err := json.Marshal(spec)
	if err != nil {
		return nil, fmt.Errorf("encode sandbox spec: %w", err)
	}
	r.spec = data
	// Everything the init sets up before it knows the program: a run
	// prepared in advance serves a later one with the same key.
	r.key = runKey(string(data), prog, p)
	if err := r.pipes(); err != nil {
		return nil, err
	}

	flags := syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS
	if !prog.Network {
		flags |= syscall.CLONE_NEWNET
	}
	r.cmd = &exec.Cmd{
		// Without the helper, /proc/self/exe rather than a path: it still
		// works when the binary was replaced on disk since the server started.
		Path: iso.init,
		Args: []string{"omnidev", InitArg},
		Dir:  "/",
		// The program's environment comes with the launch spec.
		Env:        []string{},
		ExtraFiles: r.childEnds,
		SysProcAttr: &syscall.SysProcAttr{
			// A session of its own: no controlling terminal to type into
			// (TIOCSTI), and a process group for Kill.
			Setsid:     true,
			Cloneflags: uintptr(flags),
			// Our own ids, so files keep their owners and permissions. The
			// init gets the capabilities it needs to mount as ambient ones
			// and drops every capability before it starts the runtime.
			UidMappings:                []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}},
			GidMappings:                []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}},
			GidMappingsEnableSetgroups: false,
			AmbientCaps:                ambient(prog),
			// No Pdeathsig here: Go's child checks its parent's pid after
			// setting it, and in a new PID namespace that pid reads as 0,
			// so the child would kill itself. The init sets it first thing.
		},
	}
	return r, nil
}

// runKey names what an init sets up before it knows its program (see
// Run.Key), from its spec.
func runKey(spec string, prog Program, p *Policy) string {
	return fmt.Sprintf("%s|network=%v|memory=%d|processes=%d", spec, prog.Network, p.MemoryBytes, p.Processes)
}

// pipes creates the init's spec and status pipes.
func (r *Run) pipes() error {
	specR, specW, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("create sandbox pipe: %w", err)
	}
	statusR, statusW, err := os.Pipe()
	if err != nil {
		specR.Close()
		specW.Close()
		return fmt.Errorf("create sandbox pipe: %w", err)
	}
	r.specW, r.statusR, r.childEnds = specW, statusR, []*os.File{specR, statusW}
	return nil
}

// Linux capability numbers (linux/capability.h).
const (
	capSetpcap  = 8
	capNetAdmin = 12
	capSysAdmin = 21
)

// ambient are the capabilities the init needs in its namespaces: to mount,
// to drop the rest, and with an egress proxy to bring the loopback up.
func ambient(prog Program) []uintptr {
	caps := []uintptr{capSysAdmin, capSetpcap}
	if prog.Egress != "" {
		caps = append(caps, capNetAdmin)
	}
	return caps
}

// hostRun runs prog in its own process group on the host, or, with the
// network off, in new user and network namespaces.
func hostRun(prog Program, reason string) *Run {
	env := prog.Env
	if env == nil {
		// exec.Cmd reads a nil Env as "inherit the server's environment".
		env = []string{}
	}
	r := &Run{reason: reason}
	r.cmd = &exec.Cmd{
		Path: prog.Path,
		Args: append([]string{prog.Path}, prog.Args...),
		Dir:  prog.Dir,
		Env:  env,
		SysProcAttr: &syscall.SysProcAttr{
			// A session of its own, as in namespaces.
			Setsid: true,
			// A last resort should the server die without cleaning up: the
			// kernel sends it when the thread that forked exits; Go only
			// retires a thread when a goroutine locked to it exits, which
			// nothing in the server does.
			Pdeathsig: syscall.SIGKILL,
		},
	}
	if !prog.Network {
		// The network namespace has only a loopback interface, down, so
		// every connection fails at once, 127.0.0.1 included. The user
		// namespace is what lets an unprivileged server create it.
		a := r.cmd.SysProcAttr
		a.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
		a.GidMappingsEnableSetgroups = false
	}
	return r
}

// Serve makes r, prepared in advance, serve in place of fresh, prepared
// just now with the same Key: the protected paths to put back after the
// run are the ones as they are now, not as they were then.
func (r *Run) Serve(fresh *Run) { r.guarded = fresh.guarded }

// Discard releases a run that was never started.
func (r *Run) Discard() {
	r.closeAll()
	if r.private != "" {
		os.RemoveAll(r.private)
	}
}

// Cmd returns the command to start.
func (r *Run) Cmd() *exec.Cmd { return r.cmd }

// Fallback returns the run to start instead when starting r failed with
// err because the kernel refused the namespaces: the same program on the
// host, its report saying why. ok is false when there is none: the run
// was not isolated anyway, or the network must be off, which only a
// namespace does.
func (r *Run) Fallback(prog Program, err error) (*Run, bool) {
	if !r.isolated || r.mode == ModeLandlock || !isNamespaceRefusal(err) {
		return nil, false
	}
	r.closeAll()
	if r.policy.Mode != ModeNamespaces && prog.Egress == "" && landlockABI() >= 2 {
		why := userNamespaceRefusal(err)
		r.iso.nsMu.Lock()
		r.iso.nsRefused = why
		r.iso.nsMu.Unlock()
		if run, lerr := r.iso.prepareLandlock(prog, r.policy, why); lerr == nil {
			return run, true
		}
	}
	if !prog.Network {
		return nil, false
	}
	return hostRun(prog, fmt.Sprintf("the kernel refused to create namespaces (%v); allow unprivileged user namespaces "+
		"(sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 24.04 and later kernel.apparmor_restrict_unprivileged_userns=0)", err)), true
}

// StartError turns a failed start into the error to return.
func (r *Run) StartError(prog Program, err error) error {
	r.closeAll()
	if prog.Egress != "" && isNamespaceRefusal(err) {
		return fmt.Errorf("%w: [sandbox] network lists hosts, which only the namespace mode can enforce, and the kernel refused namespaces (%v); %s, or set network = true or false",
			ErrNetworkIsolation, err, NamespacesHint)
	}
	if !prog.Network && isNamespaceRefusal(err) {
		return fmt.Errorf("%w: the kernel refused to create user and network namespaces (%v); "+
			"allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 24.04 and later "+
			"kernel.apparmor_restrict_unprivileged_userns=0) or set network = true in [sandbox]", ErrNetworkIsolation, err)
	}
	return fmt.Errorf("start %s: %w", prog.Path, err)
}

// isNamespaceRefusal reports whether a start error is the kernel refusing
// the namespaces: EPERM or EACCES when unprivileged user namespaces are
// disabled or restricted (AppArmor, SELinux), ENOSPC or EUSERS when a
// namespace quota is reached, EINVAL or ENOSYS when the kernel lacks them.
// A missing program (ENOENT) is not one.
func isNamespaceRefusal(err error) bool {
	for _, errno := range []error{syscall.EPERM, syscall.EACCES, syscall.ENOSPC, syscall.EUSERS, syscall.EINVAL, syscall.ENOSYS} {
		if errors.Is(err, errno) {
			return true
		}
	}
	return false
}

// Started is called once the command started: it hands the init its spec
// and, meanwhile, puts it in the run's cgroups. Moving a process between
// cgroups waits for an RCU grace period (milliseconds, more on a busy
// machine), so it proceeds while the init sets up and the runtime boots;
// Ready waits for it.
func (r *Run) Started() error {
	for _, f := range r.childEnds {
		f.Close()
	}
	r.childEnds = nil
	if !r.isolated {
		return nil
	}
	pid := r.cmd.Process.Pid
	// Held until Finish, then closed off the run's path: the last
	// reference to a mount namespace tears it down, which waits for RCU.
	if f, err := os.Open(fmt.Sprintf("/proc/%d/ns/mnt", pid)); err == nil {
		r.mntNS = f
	}
	r.joined = make(chan struct{})
	go func() {
		defer close(r.joined)
		r.cg, r.notEnforced = r.iso.cgroups.join(pid, r.policy, r.notEnforced)
	}()
	if _, err := r.specW.Write(r.spec); err != nil {
		return fmt.Errorf("hand the sandbox its spec: %w", err)
	}
	return nil
}

// Key names what the init sets up before Launch: two runs with the same
// key differ only in the program, so a run started in advance can serve.
func (r *Run) Key() string { return r.key }

// Launch tells the init which program to start. Until then it waits, its
// namespaces, view and cgroups ready.
func (r *Run) Launch(prog Program) error {
	if !r.isolated {
		return nil
	}
	select {
	case <-r.joined:
		// In the Landlock mode the wall step, the runtime to be, was
		// started with the init: it joins by itself (see Ready).
		r.inherits = r.mode != ModeLandlock
	default:
	}
	env := prog.Env
	if r.private != "" {
		env = setenv(setenv(env, "TMPDIR", filepath.Join(r.private, "tmp")), "HOME", filepath.Join(r.private, "home"))
	}
	data, err := json.Marshal(launchSpec{Path: prog.Path, Args: prog.Args, Dir: prog.Dir, Env: env, Egress: prog.Egress})
	if err != nil {
		return fmt.Errorf("encode the program to launch: %w", err)
	}
	if _, err := r.specW.Write(data); err != nil {
		return fmt.Errorf("hand the sandbox its program: %w", err)
	}
	return nil
}

// Ready waits until the init has set the sandbox up and started the
// runtime, and until both are in the run's cgroups. The runtime is held at
// its gate meanwhile and starts nothing. An error means the run must be
// aborted: nothing runs with less isolation than was asked for.
func (r *Run) Ready() error {
	if !r.isolated {
		return nil
	}
	msg, err := io.ReadAll(r.statusR)
	r.statusR.Close()
	r.specW.Close()
	r.statusR, r.specW = nil, nil
	switch {
	case err != nil:
		return fmt.Errorf("set up the sandbox: %w", err)
	case len(msg) == 0:
		return errors.New("set up the sandbox: its init exited before starting the runtime")
	case !strings.HasPrefix(string(msg), statusReady):
		return fmt.Errorf("set up the sandbox: %s; set [sandbox] filesystem = \"host\" if the filesystem part cannot work on this machine", strings.TrimSpace(string(msg)))
	}
	var walls wallsReport
	if err := json.Unmarshal(msg[len(statusReady):], &walls); err != nil {
		return fmt.Errorf("set up the sandbox: its init said %q", msg)
	}
	<-r.joined
	r.walls = walls.Held
	r.notEnforced = append(r.notEnforced, walls.Missing...)
	if r.cg != nil && len(r.cg.dirs) > 0 && !r.inherits {
		// The runtime was started before the init joined, or after: in
		// the first case it must join by itself.
		pid := r.cmd.Process.Pid
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
		if err != nil {
			return fmt.Errorf("find the runtime's process: %w", err)
		}
		for _, child := range strings.Fields(string(data)) {
			if err := r.cg.add(child); err != nil {
				return err
			}
		}
	}
	return nil
}

// Signal asks the whole program to stop. In namespaces the init forwards
// it to every process there, setsid ones included; on the host it goes to
// the process group.
func (r *Run) Signal(sig syscall.Signal) {
	if r.isolated {
		syscall.Kill(r.cmd.Process.Pid, sig)
		return
	}
	syscall.Kill(-r.cmd.Process.Pid, sig)
}

// Kill ends everything: in namespaces, the init's death takes the whole
// PID namespace with it; on the host, the process group is killed. Call it
// before reaping the command, so the group's id cannot have been reused.
func (r *Run) Kill() {
	if r.mode == ModeLandlock {
		// Outside namespaces the init's death takes nothing with it: its
		// descendants go first, setsid ones included.
		killDescendants(r.cmd.Process.Pid, false)
	}
	syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
}

// Finish is called after the command was reaped: it reports how the run
// was contained and whether the memory limit stopped it, and removes the
// run's cgroups.
func (r *Run) Finish() Report {
	r.closeAll()
	if r.joined != nil {
		<-r.joined
	}
	if r.mntNS != nil {
		go r.mntNS.Close()
	}
	if !r.isolated {
		return Report{Isolation: "none: " + r.reason}
	}
	notices, stuck := guard(r.root, r.guarded)
	r.iso.setStuck(stuck)
	rep := Report{Isolation: isolation(r.walls, r.notEnforced)}
	if r.mode == ModeLandlock {
		rep.Isolation = landlockIsolation(r.walls, r.why, r.notEnforced)
		go os.RemoveAll(r.private)
	}
	if r.cg != nil {
		rep.OutOfMemory = r.cg.oomKilled()
		if rep.OutOfMemory {
			notices = append(notices, r.policy.MemoryNotice)
		}
		if r.cg.pidsMaxed() {
			notices = append(notices, r.policy.ProcessesNotice)
		}
		// Off the run's path: the kernel may take a moment to let go.
		go r.cg.remove()
	}
	rep.Notice = strings.Join(notices, "\n")
	return rep
}

func (r *Run) closeAll() {
	for _, f := range append(r.childEnds, r.specW, r.statusR) {
		if f != nil {
			f.Close()
		}
	}
	r.childEnds, r.specW, r.statusR = nil, nil, nil
}
