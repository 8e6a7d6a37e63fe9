//go:build linux

package isolate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Exit statuses of the init when the runtime never ran.
const (
	exitSetup = 125
	exitStart = 127
)

// Init is the sandbox's first process: it sets the view up, drops every
// capability, starts the runtime, reaps orphans and returns the runtime's
// exit status (128+n when signal n killed it) for main to exit with. Its
// exit ends the PID namespace, and with it every process left there.
func Init() int {
	// Capabilities and the bounding set belong to a thread: the one that
	// drops them must be the one that forks the runtime.
	runtime.LockOSThread()
	if len(os.Args) > 1 && os.Args[1] == WallArg {
		return wallMain()
	}
	// First of all, so that the server's death from now on kills us (and
	// with us the namespace); a death before it is seen below.
	unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0, 0, 0)
	specF := os.NewFile(specFD, "spec")
	status := os.NewFile(statusFD, "status")
	syscall.CloseOnExec(specFD)
	syscall.CloseOnExec(statusFD)
	fail := func(code int, format string, args ...any) int {
		fmt.Fprintf(status, format, args...)
		return code
	}
	var spec initSpec
	dec := json.NewDecoder(specF)
	if err := dec.Decode(&spec); err != nil {
		return fail(exitSetup, "read the sandbox spec: %v", err)
	}
	if spec.Mode == ModeLandlock {
		return initLandlock(spec, dec, specF, status)
	}
	if parentGone(specFD) {
		return exitSetup
	}
	if err := setup(spec.View); err != nil {
		return fail(exitSetup, "%v", err)
	}
	var egress *bridge
	if spec.Egress {
		var err error
		if egress, err = bridgeEgress(); err != nil {
			return fail(exitSetup, "bridge to the egress proxy: %v", err)
		}
	}
	// A keyring of the run's own: the server's session keyring (and the
	// keys in it) is out of reach (E9); seccomp then denies keyctl.
	joinKeyring()
	if err := dropPrivileges(); err != nil {
		return fail(exitSetup, "drop privileges: %v", err)
	}
	walls, err := raiseWalls(spec)
	if err != nil {
		return fail(exitSetup, "%v", err)
	}
	// Prepared in advance, the init may wait here a long time; the parent
	// closing the pipe instead means it is not needed.
	var launch launchSpec
	if err := dec.Decode(&launch); err != nil {
		return exitSetup
	}
	if egress != nil {
		egress.target.Store(&launch.Egress)
	}
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	env := launch.Env
	if env == nil {
		env = []string{}
	}
	child, err := os.StartProcess(launch.Path, append([]string{launch.Path}, launch.Args...), &os.ProcAttr{
		Dir:   launch.Dir,
		Env:   env,
		Files: []*os.File{os.Stdin, os.Stdout, os.Stderr},
	})
	if err != nil {
		return fail(exitStart, "start %s: %v", launch.Path, err)
	}
	status.WriteString(statusReady + walls)
	status.Close()
	specF.Close()
	go func() {
		// The parent signals only us; every process in the namespace gets
		// it, those that left the process group too.
		for sig := range signals {
			syscall.Kill(-1, sig.(syscall.Signal))
		}
	}()
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, 0, nil)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case err != nil:
			return exitStart
		case pid != child.Pid:
			continue // an orphan, reaped
		case ws.Signaled():
			return 128 + int(ws.Signal())
		default:
			return ws.ExitStatus()
		}
	}
}

// parentGone reports whether the parent closed its end of fd, which it
// holds until the sandbox is ready, or died.
func parentGone(fd int) bool {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n > 0 && fds[0].Revents&unix.POLLHUP != 0
}

// setup builds the view (see view), or with a nil view only makes the
// mounts private, then mounts a /proc of the PID namespace and names the
// host "omnidev".
func setup(v *view) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	if v != nil {
		if err := mountView(v); err != nil {
			return err
		}
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /proc for the PID namespace: %w", err)
	}
	if err := hardenProc(v == nil); err != nil {
		return err
	}
	unix.Sethostname([]byte("omnidev"))
	return nil
}

// The parts of /proc a container runtime makes read-only or hides: a
// process whose uid is root's on the host writes kernel settings through
// /proc/sys (kernel.core_pattern runs a program as host root, E1), and
// reads the kernel's memory, keys and timers through the others.
var (
	procReadOnly = []string{"/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs"}
	procMasked   = []string{"/proc/kcore", "/proc/keys", "/proc/key-users", "/proc/timer_list", "/proc/sched_debug",
		"/proc/latency_stats", "/proc/timer_stats", "/proc/kmsg", "/proc/acpi", "/proc/scsi", "/proc/asound",
		"/proc/interrupts", "/sys/firmware", "/sys/devices/virtual/powercap"}
)

// hardenProc makes the new /proc's kernel settings read-only and hides the
// rest of procReadOnly's kind; with the host's filesystem (no view), /sys
// is made read-only too (a view has it read-only with the rest).
func hardenProc(hostFS bool) error {
	ro := procReadOnly
	if hostFS {
		ro = append([]string{"/sys"}, ro...)
	}
	for _, path := range ro {
		if _, err := os.Lstat(path); err != nil {
			continue
		}
		if err := unix.Mount(path, path, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("bind %s: %w", path, err)
		}
		attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV | unix.MOUNT_ATTR_NOEXEC}
		if err := unix.MountSetattr(unix.AT_FDCWD, path, unix.AT_RECURSIVE, &attr); err != nil {
			return fmt.Errorf("make %s read-only: %w", path, err)
		}
	}
	for _, path := range procMasked {
		if err := mask(path); err != nil {
			return err
		}
	}
	return nil
}

func mountView(v *view) error {
	trees := make([]int, len(v.Binds))
	defer func() {
		for _, fd := range trees {
			if fd > 0 {
				unix.Close(fd)
			}
		}
	}()
	for i, b := range v.Binds {
		// Resolved by the server with every symlink followed; opened here
		// with none, so that a path a run changed since is refused rather
		// than bound where it now leads (E7).
		pfd, err := unix.Openat2(unix.AT_FDCWD, b.src(), &unix.OpenHow{
			Flags:   unix.O_PATH | unix.O_CLOEXEC | unix.O_NOFOLLOW,
			Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
		})
		if err != nil {
			return fmt.Errorf("open %s without following symbolic links: %w", b.src(), err)
		}
		fd, err := unix.OpenTree(pfd, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE|unix.AT_EMPTY_PATH)
		unix.Close(pfd)
		if err != nil {
			return fmt.Errorf("clone %s: %w", b.src(), err)
		}
		trees[i] = fd
		attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV}
		if !b.Writable {
			attr.Attr_set |= unix.MOUNT_ATTR_RDONLY
		}
		if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &attr); err != nil {
			return fmt.Errorf("set the mount flags of %s: %w", b.Path, err)
		}
	}
	if err := unix.MountSetattr(unix.AT_FDCWD, "/", unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
		return fmt.Errorf("make the host read-only: %w", err)
	}
	for _, dir := range v.Tmpfs {
		// A home inside /tmp is gone from the empty /tmp: create it there.
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("create %s: %w", dir, err)
		}
		if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777"); err != nil {
			return fmt.Errorf("mount an empty folder on %s: %w", dir, err)
		}
	}
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if err := unix.Mount("tmpfs", "/dev/shm", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777"); err != nil {
			return fmt.Errorf("mount an empty /dev/shm: %w", err)
		}
	}
	for _, m := range v.Masks {
		if err := mask(m); err != nil {
			return err
		}
	}
	for i, b := range v.Binds {
		if err := mountPoint(b.Path, trees[i]); err != nil {
			return err
		}
		if err := unix.MoveMount(trees[i], "", unix.AT_FDCWD, b.Path, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
			return fmt.Errorf("mount %s: %w", b.Path, err)
		}
	}
	return nil
}

// mask hides path: a folder behind an empty read-only tmpfs, anything else
// behind /dev/null.
func mask(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil
	}
	if fi.IsDir() {
		err = unix.Mount("tmpfs", path, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=0500,size=4k")
	} else if fi.Mode().IsRegular() {
		err = unix.Mount("/dev/null", path, "", unix.MS_BIND, "")
	}
	if err != nil {
		return fmt.Errorf("hide %s: %w", path, err)
	}
	return nil
}

// mountPoint makes sure path exists to mount the tree fd on: a bind
// inside one of the view's empty folders needs its folders (or file)
// created there first.
func mountPoint(path string, fd int) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("inspect %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		if err := os.MkdirAll(path, 0o755); err != nil {
			return fmt.Errorf("create mount point %s: %w", path, err)
		}
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create mount point %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("create mount point %s: %w", path, err)
	}
	return f.Close()
}

// Secure bits (linux/securebits.h): uid 0 gets no capabilities from
// execve, and nothing can turn that back on.
const (
	secNoRoot             = 1 << 0
	secNoRootLocked       = 1 << 1
	secNoSetuidFixup      = 1 << 2
	secNoSetuidFixupLock  = 1 << 3
	secKeepCapsLocked     = 1 << 5
	secNoAmbientRaise     = 1 << 6
	secNoAmbientRaiseLock = 1 << 7
)

// dropPrivileges leaves the runtime no capability in the namespaces (a
// capable program could unmount the read-only parts of its view): no
// ambient capabilities, an empty bounding set, secure bits that give uid 0
// nothing on execve, and no new privileges from set-user-ID files.
func dropPrivileges() error {
	// Capabilities the init was handed as inheritable ones go first.
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var caps [2]unix.CapUserData
	if err := unix.Capget(&hdr, &caps[0]); err != nil {
		return fmt.Errorf("read capabilities: %w", err)
	}
	if caps[0].Permitted == 0 && caps[1].Permitted == 0 && caps[0].Inheritable == 0 && caps[1].Inheritable == 0 {
		// Nothing to drop (an ordinary user outside namespaces, where
		// securebits need the capability they would take away).
		return unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
	}
	caps[0].Inheritable, caps[1].Inheritable = 0, 0
	if err := unix.Capset(&hdr, &caps[0]); err != nil {
		return fmt.Errorf("clear inheritable capabilities: %w", err)
	}
	bits := secNoRoot | secNoRootLocked | secNoSetuidFixup | secNoSetuidFixupLock | secKeepCapsLocked | secNoAmbientRaise | secNoAmbientRaiseLock
	if err := unix.Prctl(unix.PR_SET_SECUREBITS, uintptr(bits), 0, 0, 0); err != nil {
		return fmt.Errorf("set secure bits: %w", err)
	}
	for c := 0; c <= lastCap(); c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("drop capability %d: %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	return unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
}

func lastCap() int {
	data, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err != nil {
		return 63
	}
	n := 0
	fmt.Sscan(strings.TrimSpace(string(data)), &n)
	return n
}

// secretPaths returns what a program running as root must not read although
// root owns it: every entry under /etc that others may not read (shadow
// files, private keys), and /root. An ordinary user cannot read them
// anyway, so for one there is nothing to hide.
func secretPaths() []string {
	if os.Getuid() != 0 {
		return nil
	}
	var out []string
	filepath.WalkDir("/etc", func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == "/etc" {
			return nil
		}
		fi, err := d.Info()
		if err != nil || fi.Mode()&fs.ModeSymlink != 0 {
			return nil
		}
		if fi.Mode().Perm()&0o004 == 0 {
			out = append(out, path)
			if d.IsDir() {
				return filepath.SkipDir
			}
		}
		return nil
	})
	if fi, err := os.Stat("/root"); err == nil && fi.IsDir() && !slices.Contains(out, "/root") {
		out = append(out, "/root")
	}
	return out
}

// joinKeyring gives the run a session keyring of its own, so that the
// server's (and the keys in it) are out of reach (E9). It is a second
// wall: seccomp denies keyctl, add_key and request_key to the program
// anyway, so a kernel without keys (ENOSYS) or a user at its key quota
// (EDQUOT, runs in quick succession before the old keyrings are collected)
// does not stop the run.
func joinKeyring() {
	unix.KeyctlJoinSessionKeyring("omnidev-run")
}
