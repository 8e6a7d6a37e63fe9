//go:build linux

package isolate

import (
	"encoding/binary"
	"fmt"
	"slices"
	"unsafe"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// deniedSyscalls are the calls a program gets EPERM for: what container
// runtimes deny by default and no JavaScript runtime needs. Keys (E9),
// other processes' memory, the kernel's own machinery (eBPF, perf,
// modules, kexec), mounts, new namespaces (a way back to capabilities in a
// fresh user namespace) and io_uring, whose operations seccomp cannot see.
// Names a kernel architecture lacks (iopl on arm64) are skipped.
var deniedSyscalls = []string{
	"keyctl", "add_key", "request_key",
	"ptrace", "process_vm_readv", "process_vm_writev",
	"bpf", "perf_event_open", "userfaultfd", "fanotify_init",
	"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
	"mount", "umount2", "pivot_root", "move_mount", "open_tree", "open_tree_attr",
	"fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
	"unshare", "setns",
	"io_uring_setup", "io_uring_enter", "io_uring_register",
	"open_by_handle_at", "name_to_handle_at",
	"syslog", "swapon", "swapoff", "reboot", "acct", "quotactl", "quotactl_fd",
	"iopl", "ioperm", "lookup_dcookie", "vhangup", "uselib",
	"settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
}

// namespaceFlags are clone's flags that create namespaces.
var namespaceFlags = []uint64{
	unix.CLONE_NEWUSER, unix.CLONE_NEWNS, unix.CLONE_NEWPID, unix.CLONE_NEWNET,
	unix.CLONE_NEWIPC, unix.CLONE_NEWUTS, unix.CLONE_NEWCGROUP, unix.CLONE_NEWTIME,
}

// Terminal ioctls a program must never make: TIOCSTI types into the
// terminal's input queue, TIOCLINUX can do the same on a console (E6).
const (
	ioctlTIOCSTI   = 0x5412
	ioctlTIOCLINUX = 0x541C
)

// attributeSyscalls change a file's mode, owner or times by path or
// descriptor. Landlock does not confine them, and in the Landlock mode no
// read-only mount does either: a program could make a root-owned program
// setuid (as root) or the user's key readable to all. That mode denies
// them; the namespace mode needs not (EROFS outside the writable parts).
var attributeSyscalls = []string{
	"chmod", "fchmod", "fchmodat", "fchmodat2",
	"chown", "fchown", "lchown", "fchownat",
	"utime", "utimes", "utimensat", "futimesat",
}

// seccompPolicy is the deny list for a run; without network, socket() for
// any family but AF_UNIX fails too (the relay's socket stays reachable);
// in the Landlock mode, attributeSyscalls too.
func seccompPolicy(network, landlockMode bool) (seccomp.Policy, error) {
	native, err := arch.GetInfo("")
	if err != nil {
		return seccomp.Policy{}, err
	}
	deny := seccomp.Action(uint32(seccomp.ActionErrno) | uint32(unix.EPERM))
	denied := deniedSyscalls
	if landlockMode {
		denied = append(slices.Clone(denied), attributeSyscalls...)
	}
	var names []string
	for _, n := range denied {
		if _, ok := native.SyscallNames[n]; ok {
			names = append(names, n)
		}
	}
	group := seccomp.SyscallGroup{Names: names, Action: deny}
	for _, f := range namespaceFlags {
		group.NamesWithCondtions = append(group.NamesWithCondtions, seccomp.NameWithConditions{
			Name:       "clone",
			Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.BitsSet, Value: f}},
		})
	}
	groups := []seccomp.SyscallGroup{group}
	// clone3 passes its flags in memory, which a filter cannot read: ENOSYS
	// makes the C library fall back to clone, whose flags it can.
	groups = append(groups, seccomp.SyscallGroup{
		Names:  []string{"clone3"},
		Action: seccomp.Action(uint32(seccomp.ActionErrno) | uint32(unix.ENOSYS)),
	})
	if !network {
		groups = append(groups, seccomp.SyscallGroup{
			NamesWithCondtions: []seccomp.NameWithConditions{{
				Name:       "socket",
				Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.NotEqual, Value: unix.AF_UNIX}},
			}},
			Action: seccomp.Action(uint32(seccomp.ActionErrno) | uint32(unix.EACCES)),
		})
	}
	return seccomp.Policy{DefaultAction: seccomp.ActionAllow, Syscalls: groups}, nil
}

// loadSeccomp installs the run's filters on every thread of the calling
// process; the runtime it starts inherits them, and so does everything
// that starts.
func loadSeccomp(network, landlockMode bool) error {
	policy, err := seccompPolicy(network, landlockMode)
	if err != nil {
		return err
	}
	if err := seccomp.LoadFilter(seccomp.Filter{NoNewPrivs: true, Flag: seccomp.FilterFlagTSync, Policy: policy}); err != nil {
		return err
	}
	return loadGuardFilter()
}

// loadGuardFilter installs a second filter for what the library's policy
// cannot say. The library lets a call through unfiltered when it is made
// with another architecture's convention (int 0x80 on x86-64), which
// native code started by a program can do: such calls fail here. And
// ioctl's request is a 32-bit int that the kernel truncates, so only its
// low half is compared (a full 64-bit compare is bypassed by setting the
// high half). Filters stack; the kernel applies the strictest answer.
func loadGuardFilter() error {
	native, err := arch.GetInfo("")
	if err != nil {
		return err
	}
	ioctlNr, ok := native.SyscallNames["ioctl"]
	if !ok {
		return fmt.Errorf("no ioctl on %s", native.Name)
	}
	const (
		offNr    = 0
		offArch  = 4
		retAllow = unix.SECCOMP_RET_ALLOW
	)
	// args[1] (at 16+8), its low 32 bits: first on a little-endian machine.
	offArg1 := uint32(16 + 8)
	if binary.NativeEndian.Uint16([]byte{0, 1}) == 1 {
		offArg1 += 4
	}
	deny := uint32(unix.SECCOMP_RET_ERRNO) | uint32(unix.EPERM)
	prog := []bpf.Instruction{
		bpf.LoadAbsolute{Off: offArch, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(native.ID), SkipTrue: 1},
		bpf.RetConstant{Val: uint32(unix.SECCOMP_RET_ERRNO) | uint32(unix.ENOSYS)},
		bpf.LoadAbsolute{Off: offNr, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(ioctlNr), SkipFalse: 4},
		bpf.LoadAbsolute{Off: offArg1, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: ioctlTIOCSTI, SkipTrue: 1},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: ioctlTIOCLINUX, SkipFalse: 1},
		bpf.RetConstant{Val: deny},
		bpf.RetConstant{Val: retAllow},
	}
	raw, err := bpf.Assemble(prog)
	if err != nil {
		return err
	}
	filter := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		filter[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	fprog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog)))
	if errno != 0 {
		return fmt.Errorf("load the guard filter: %w", errno)
	}
	return nil
}
