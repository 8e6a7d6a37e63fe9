//go:build linux

package isolate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// The Landlock mode contains a run where the kernel refuses unprivileged
// user namespaces (Ubuntu 23.10+, Docker's default seccomp profile,
// user.max_user_namespaces=0): no namespace and no privilege needed.
//
// The init is started in a session of its own and made a child subreaper,
// so that everything the program starts, setsid and double-forked children
// included, stays its descendant; it stays outside the program's Landlock
// domain (the program can neither signal nor ptrace it) and starts the
// runtime through a short-lived step (WallArg) that raises the walls on
// itself and then executes the runtime. When the runtime ends, or the
// server stops or dies, the init stops and kills every descendant.
//
// What the mode cannot do: a private /tmp and /proc at their paths (the
// program gets a private temporary folder and home as TMPDIR and HOME, and
// sees the host's processes, though Landlock keeps their /proc entries
// that ptrace guards, environ and mem, out of its reach), new files at the
// repository's top level (Landlock cannot leave .git and omni/ out of a
// rule on their parent), and host Unix sockets (Landlock ABI 9 restricts
// them; this mode cannot hide /run).

// WallArg, as the first argument of omnidev's binary, makes it the step
// that raises the walls of the Landlock mode and executes the runtime.
const WallArg = wallArg

// landlockNotEnforced is what the Landlock mode leaves out, for isolation.
var landlockNotEnforced = []string{
	"private /tmp and /proc (the program gets a private TMPDIR and HOME, and sees the host's processes)",
	"new files at the repository's top level",
	"host Unix sockets",
}

// userNamespaceRefusal says why the kernel refuses unprivileged user
// namespaces, naming the setting where one is the cause.
func userNamespaceRefusal(err error) string {
	for _, s := range []struct{ file, bad, name string }{
		{"/proc/sys/kernel/apparmor_restrict_unprivileged_userns", "1", "kernel.apparmor_restrict_unprivileged_userns=1"},
		{"/proc/sys/user/max_user_namespaces", "0", "user.max_user_namespaces=0"},
		{"/proc/sys/kernel/unprivileged_userns_clone", "0", "kernel.unprivileged_userns_clone=0"},
	} {
		if data, e := os.ReadFile(s.file); e == nil && strings.TrimSpace(string(data)) == s.bad {
			return "no user namespaces (" + s.name + ")"
		}
	}
	return fmt.Sprintf("no user namespaces (the kernel refused them: %v; a container's seccomp profile does this)", err)
}

// prepareLandlock returns a run of prog in the Landlock mode; why says
// why this mode (a setting, or the kernel's refusal).
func (iso *Isolator) prepareLandlock(prog Program, p *Policy, why string) (*Run, error) {
	// Programs of this mode share the server's user and see its /proc:
	// non-dumpable, its environ, mem and fd entries belong to root (a
	// second wall beside Landlock's ptrace rule). The namespace mode makes
	// it dumpable again: the server writes its init's uid_map, which a
	// non-dumpable parent's child does not let it do.
	setDumpable(false)
	if prog.Egress != "" {
		return nil, fmt.Errorf("%w: [sandbox] network lists hosts, which only the namespace mode can enforce (%s); %s, or set network = true or false",
			ErrNetworkIsolation, why, NamespacesHint)
	}
	if landlockABI() < 2 {
		return nil, fmt.Errorf("%w: %s, and the kernel has no Landlock (ABI 2 or later, Linux 5.19+) to contain programs without them; %s, or set [sandbox] isolation = \"none\" to run programs uncontained",
			ErrIsolation, why, NamespacesHint)
	}
	private, err := os.MkdirTemp("", "omnidev-run-*")
	if err != nil {
		return nil, fmt.Errorf("create the run's private folder: %w", err)
	}
	for _, d := range []string{"tmp", "home"} {
		if err := os.Mkdir(filepath.Join(private, d), 0o700); err != nil {
			os.RemoveAll(private)
			return nil, fmt.Errorf("create the run's private folder: %w", err)
		}
	}
	if p.Filesystem {
		if err := os.MkdirAll(filepath.Join(prog.Root, filepath.FromSlash(StateDir)), 0o755); err != nil {
			os.RemoveAll(private)
			return nil, fmt.Errorf("create %s: %w", StateDir, err)
		}
	}
	runtimePaths, _ := RuntimePaths(prog.Path, prog.Root, prog.Env)
	v := planLandlock(prog, p, iso.etc, runtimePaths, private)
	spec := initSpec{Mode: ModeLandlock, View: &v, Network: prog.Network, NProc: iso.nprocLimit(p)}
	data, err := json.Marshal(spec)
	if err != nil {
		os.RemoveAll(private)
		return nil, fmt.Errorf("encode sandbox spec: %w", err)
	}
	r := &Run{iso: iso, policy: p, isolated: true, mode: ModeLandlock, why: why, root: prog.Root, private: private, spec: data}
	if !p.Filesystem {
		r.notEnforced = append(r.notEnforced, `filesystem ([sandbox] filesystem = "host")`)
	}
	r.notEnforced = append(r.notEnforced, landlockNotEnforced...)
	// The private folder differs from run to run and does not make the
	// sandbox another one: a run prepared in advance serves.
	r.key = runKey(strings.ReplaceAll(string(data), private, "<private>"), prog, p)
	if err := r.pipes(); err != nil {
		os.RemoveAll(private)
		return nil, err
	}
	r.cmd = &exec.Cmd{
		Path:       iso.init,
		Args:       []string{"omnidev", InitArg},
		Dir:        "/",
		Env:        []string{},
		ExtraFiles: r.childEnds,
		SysProcAttr: &syscall.SysProcAttr{
			Setsid: true,
			// The init turns it into SIGUSR2, which it handles by killing
			// the run's processes; SIGKILL is the backstop until then.
			Pdeathsig: syscall.SIGKILL,
		},
	}
	return r, nil
}

// planLandlock returns the Landlock rules of the mode: the system, the
// runtime's folders, the readable paths and the repository readable; the
// repository's top-level entries but the protected ones, .omni/state, the
// writable paths and the run's private folder writable.
func planLandlock(prog Program, p *Policy, etc, runtimePaths []string, private string) view {
	var v view
	v.DevFiles = devFiles
	v.ReadWrite = []string{private}
	for _, dir := range systemReadable {
		if dir != "/etc" {
			v.ReadOnly = append(v.ReadOnly, dir)
		}
	}
	v.ReadOnly = append(v.ReadOnly, etc...)
	if !p.Filesystem {
		v.ReadOnly = append(v.ReadOnly, "/")
		v.ReadWrite = append(v.ReadWrite, "/")
		return v
	}
	root := filepath.Clean(prog.Root)
	realRoot := root
	if r, err := filepath.EvalSymlinks(root); err == nil {
		realRoot = r
	}
	v.ReadOnly = append(v.ReadOnly, root)
	for _, path := range slices.Concat(p.Readable, runtimePaths) {
		b, problem := resolveBind(path, root, realRoot, false)
		if problem != "" {
			v.Refused = append(v.Refused, problem)
		} else if b.Path != "" {
			v.ReadOnly = append(v.ReadOnly, b.Path)
		}
	}
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if slices.Contains(readOnlyInRoot, e.Name()) {
			continue
		}
		path := filepath.Join(root, e.Name())
		switch {
		case e.IsDir():
			v.ReadWrite = append(v.ReadWrite, path)
		case e.Type().IsRegular():
			v.WriteFiles = append(v.WriteFiles, path)
		}
		// A symlink is left out: a rule would grant its target.
	}
	if isRealDir(filepath.Join(root, filepath.FromSlash(StateDir))) {
		v.ReadWrite = append(v.ReadWrite, filepath.Join(root, filepath.FromSlash(StateDir)))
	}
	for _, path := range p.Writable {
		b, problem := resolveBind(path, root, realRoot, true)
		switch {
		case problem != "":
			v.Refused = append(v.Refused, problem)
		case b.Path == "":
		case isRealDir(b.src()):
			v.ReadWrite = append(v.ReadWrite, b.src())
		default:
			v.WriteFiles = append(v.WriteFiles, b.src())
		}
	}
	if prog.Network {
		for _, f := range resolverFiles {
			if real, err := filepath.EvalSymlinks(f); err == nil && real != f {
				v.ReadOnly = append(v.ReadOnly, real)
			}
		}
	}
	for _, rel := range readOnlyInRoot {
		path := filepath.Join(root, filepath.FromSlash(rel))
		if fi, err := os.Lstat(path); err != nil || fi.Mode()&fs.ModeSymlink != 0 {
			v.Guarded = append(v.Guarded, guardOf(path))
		}
	}
	return v
}

// etcEntries returns what of /etc a program may read: all of it, but the
// entries masks hides (as root, those others may not read).
func etcEntries(masks []string) []string {
	if len(masks) == 0 {
		return []string{"/etc"}
	}
	entries, err := os.ReadDir("/etc")
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		path := "/etc/" + e.Name()
		if !slices.Contains(masks, path) {
			out = append(out, path)
		}
	}
	return out
}

// initLandlock is the init of the Landlock mode, from the spec on: it
// starts the runtime through the wall step, reaps, and on the runtime's
// end, a signal from the server or the server's death, ends every process
// the run started.
func initLandlock(spec initSpec, dec *json.Decoder, specF, status *os.File) int {
	fail := func(code int, format string, args ...any) int {
		fmt.Fprintf(status, format, args...)
		return code
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fail(exitSetup, "become the run's subreaper: %v", err)
	}
	joinKeyring()
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR2)
	unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGUSR2), 0, 0, 0)
	if parentGone(specFD) {
		return exitSetup
	}
	wr, ww, err := os.Pipe()
	if err != nil {
		return fail(exitSetup, "create the wall pipe: %v", err)
	}
	self, err := os.Executable()
	if err != nil {
		self = selfInit
	}
	// The wall step raises the walls now, while the run waits for its
	// program (a run prepared in advance has them up before it is needed);
	// it answers the server on the status descriptor itself once it has
	// the program, then becomes the runtime.
	child, err := os.StartProcess(self, []string{"omnidev", WallArg}, &os.ProcAttr{
		Dir:   "/",
		Env:   []string{},
		Files: []*os.File{os.Stdin, os.Stdout, os.Stderr, wr, status},
	})
	wr.Close()
	if err != nil {
		ww.Close()
		return fail(exitStart, "start the wall step: %v", err)
	}
	enc := json.NewEncoder(ww)
	enc.Encode(spec)
	var launch launchSpec
	if err := dec.Decode(&launch); err != nil {
		// Not needed after all: nor is the wall step.
		ww.Close()
		killDescendants(os.Getpid(), true)
		return exitSetup
	}
	enc.Encode(launch)
	ww.Close()
	status.Close()
	specF.Close()
	pid := os.Getpid()
	var once sync.Once
	end := func() { once.Do(func() { killDescendants(pid, true) }) }
	go func() {
		for sig := range signals {
			if sig == syscall.SIGUSR2 {
				// The server is gone: so is the run.
				end()
				os.Exit(exitStart)
			}
			for _, d := range descendants(pid) {
				signalPid(d, sig.(syscall.Signal))
			}
		}
	}()
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, 0, nil)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case err != nil:
			end()
			return exitStart
		case got != child.Pid:
			continue // an orphan, reaped
		}
		end()
		if ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ws.ExitStatus()
	}
}

// wallMain is the wall step: it raises the walls on itself, tells the
// server, and executes the runtime.
func wallMain() int {
	in := os.NewFile(3, "wall")
	status := os.NewFile(4, "status")
	dec := json.NewDecoder(in)
	var spec initSpec
	if err := dec.Decode(&spec); err != nil {
		fmt.Fprintf(status, "read the wall spec: %v", err)
		return exitSetup
	}
	// Outside namespaces the init's death would leave the run's processes
	// running: under the memory limit, the program and what it starts are
	// the ones the kernel kills first (children inherit the score).
	os.WriteFile("/proc/self/oom_score_adj", []byte("1000"), 0)
	if err := dropPrivileges(); err != nil {
		fmt.Fprintf(status, "drop privileges: %v", err)
		return exitSetup
	}
	walls, err := raiseWalls(spec)
	if err != nil {
		fmt.Fprintf(status, "%v", err)
		return exitSetup
	}
	var launch launchSpec
	if err := dec.Decode(&launch); err != nil {
		return exitSetup // the run was not needed
	}
	in.Close()
	env := launch.Env
	if env == nil {
		env = []string{}
	}
	if err := os.Chdir(launch.Dir); err != nil {
		fmt.Fprintf(status, "enter %s: %v", launch.Dir, err)
		return exitStart
	}
	status.WriteString(statusReady + walls)
	status.Close()
	err = syscall.Exec(launch.Path, append([]string{launch.Path}, launch.Args...), env)
	fmt.Fprintf(os.Stderr, "omnidev: start %s: %v\n", launch.Path, err)
	return exitStart
}

// descendants returns the live processes below pid: down the tree through
// each task's children file, which costs what the run started, not what the
// machine runs; a kernel without those files gets a scan of /proc.
func descendants(pid int) []int {
	if _, err := os.Stat("/proc/self/task/" + strconv.Itoa(unix.Gettid()) + "/children"); err != nil {
		return scanDescendants(pid)
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		tasks, _ := os.ReadDir("/proc/" + strconv.Itoa(p) + "/task")
		for _, t := range tasks {
			data, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/task/" + t.Name() + "/children")
			if err != nil {
				continue
			}
			for _, f := range strings.Fields(string(data)) {
				c, err := strconv.Atoi(f)
				if err != nil || slices.Contains(out, c) {
					continue
				}
				if _, state, ok := procStat(c); ok && state != 'Z' && state != 'X' {
					out = append(out, c)
				}
				queue = append(queue, c)
			}
		}
	}
	return out
}

// scanDescendants is descendants from every process's parent in /proc.
func scanDescendants(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		ppid, state, ok := procStat(p)
		if ok && state != 'Z' && state != 'X' {
			children[ppid] = append(children[ppid], p)
		}
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// procStat reads a process's parent and state.
func procStat(pid int) (ppid int, state byte, ok bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	// The command name may hold spaces and parentheses: the fields
	// follow the last ')'.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, 0, false
	}
	fields := strings.Fields(string(data[i+1:]))
	if len(fields) < 2 {
		return 0, 0, false
	}
	ppid, err = strconv.Atoi(fields[1])
	return ppid, fields[0][0], err == nil
}

// signalPid signals pid through a pidfd, so that a pid reused since it was
// read is not hit.
func signalPid(pid int, sig syscall.Signal) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	unix.PidfdSendSignal(fd, sig, nil, 0)
}

// killDescendants ends every process below pid: stopped first, so that
// none forks meanwhile, then killed, until a look finds none. The orphans
// of a killed process are the subreaper's, still below pid. reap is for
// the subreaper itself, which reaps them; the server must not, its other
// children being waited for elsewhere.
func killDescendants(pid int, reap bool) {
	for range 1000 {
		ds := descendants(pid)
		if len(ds) == 0 {
			return
		}
		for _, d := range ds {
			signalPid(d, syscall.SIGSTOP)
		}
		for _, d := range ds {
			signalPid(d, syscall.SIGKILL)
		}
		for reap {
			var ws syscall.WaitStatus
			if p, _ := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil); p <= 0 {
				break
			}
		}
	}
}

// setDumpable sets whether the server's /proc entries are its user's (see
// prepareLandlock).
func setDumpable(on bool) {
	v := uintptr(0)
	if on {
		v = 1
	}
	unix.Prctl(unix.PR_SET_DUMPABLE, v, 0, 0, 0)
}
