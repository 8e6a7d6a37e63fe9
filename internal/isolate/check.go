package isolate

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// States of a Protection.
const (
	Enforced    = "enforced"
	NotEnforced = "NOT enforced"
	Off         = "off" // turned off by a setting
)

// Check starts prog under p as a run would (prog should exit at once, such
// as the runtime with --version) and reports each protection and whether
// it holds on this machine.
func (iso *Isolator) Check(ctx context.Context, prog Program, p *Policy) []Protection {
	rep, err := iso.probe(ctx, prog, p)
	if err != nil {
		rep.Isolation = "none: " + err.Error()
	}
	return protections(rep.Isolation, prog.Network, p)
}

// protections reads a run's Isolation report as the list doctor prints.
func protections(isolation string, network bool, p *Policy) []Protection {
	namespaces := strings.HasPrefix(isolation, "namespaces")
	why := strings.TrimPrefix(isolation, "none: ")
	_, notEnforced, _ := strings.Cut(isolation, "not enforced: ")
	missing := func(name string) (string, bool) {
		for _, item := range strings.Split(notEnforced, "; ") {
			if rest, ok := strings.CutPrefix(item, name+" ("); ok {
				return strings.TrimSuffix(rest, ")"), true
			}
		}
		return "", false
	}
	// layer is a wall that is named in the isolation itself
	// ("namespaces+landlock+seccomp") when it holds.
	layer := func(name, detail string) Protection {
		if !namespaces {
			return Protection{name, NotEnforced, why}
		}
		if reason, ok := missing(name); ok {
			return Protection{name, NotEnforced, reason}
		}
		walls, _, _ := strings.Cut(isolation, ";")
		if !slices.Contains(strings.Split(walls, "+"), name) {
			return Protection{name, NotEnforced, "not reported by the run"}
		}
		return Protection{name, Enforced, detail}
	}
	state := func(name, detail string) Protection {
		switch {
		case !namespaces:
			return Protection{name, NotEnforced, why}
		default:
			if reason, ok := missing(name); ok {
				return Protection{name, NotEnforced, reason}
			}
		}
		return Protection{name, Enforced, detail}
	}
	var out []Protection
	if p != nil && !p.Filesystem {
		out = append(out, Protection{"filesystem", Off, `[sandbox] filesystem = "host": programs can write anywhere this user can`})
	} else {
		out = append(out, state("filesystem", "system folders read-only; worktree writable except .git, omni/, .omni (but .omni/state) and config files, present or not; empty private /tmp, $TMPDIR, home, /run and /var"))
	}
	out = append(out,
		state("processes", "PID namespace and a session of its own: everything a run starts dies with it, and with the server; no terminal to type into"),
		state("/proc", "shows only the run's own processes; kernel settings (/proc/sys) read-only, kernel memory and keys hidden"))
	if p != nil && p.Filesystem {
		out = append(out, layer("landlock", "filesystem rules enforced a second time by the kernel: reads only of the system, the runtime's folders and the repository; writes only to the worktree, the private temporary folders and the writable paths"))
	}
	out = append(out, layer("seccomp", "denied: keyrings, ptrace, eBPF, perf, userfaultfd, io_uring, mounts, new namespaces, kernel modules, TIOCSTI; with network = false, sockets but Unix ones"))
	if network {
		out = append(out, Protection{"network off", Off, "network = true: programs reach the network, loopback included"})
	} else {
		out = append(out, state("network off", "no interface but a loopback that is down"))
	}
	if p != nil {
		out = append(out,
			state("memory limit", fmt.Sprintf("cgroup: %d MiB ([sandbox] memory)", p.MemoryBytes>>20)),
			state("processes limit", fmt.Sprintf("cgroup: %d processes and threads ([sandbox] processes)", p.Processes)))
	}
	return out
}

// probe runs prog to its end under p and returns the run's report.
func (iso *Isolator) probe(ctx context.Context, prog Program, p *Policy) (Report, error) {
	r, err := iso.Prepare(prog, p)
	if err != nil {
		return Report{}, err
	}
	err = r.Cmd().Start()
	if fallback, ok := r.Fallback(prog, err); err != nil && ok {
		r = fallback
		err = r.Cmd().Start()
	}
	if err != nil {
		return Report{}, r.StartError(prog, err)
	}
	if err = r.Started(); err == nil {
		if err = r.Launch(prog); err == nil {
			err = r.Ready()
		}
	}
	if err != nil {
		r.Kill()
		r.Cmd().Wait()
		r.Finish()
		return Report{}, err
	}
	stop := context.AfterFunc(ctx, r.Kill)
	r.Cmd().Wait()
	stop()
	return r.Finish(), nil
}
