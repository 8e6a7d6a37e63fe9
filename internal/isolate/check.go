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
	landlockMode := strings.HasPrefix(isolation, "landlock")
	contained := namespaces || landlockMode
	why := strings.TrimPrefix(isolation, "none: ")
	walls, notEnforced, _ := strings.Cut(isolation, "; not enforced: ")
	walls, modeWhy, _ := strings.Cut(walls, ": ")
	missing := func(name string) (string, bool) {
		for _, item := range strings.Split(notEnforced, "; ") {
			if rest, ok := strings.CutPrefix(item, name+" ("); ok {
				return strings.TrimSuffix(rest, ")"), true
			}
		}
		return "", false
	}
	state := func(name, detail string) Protection {
		if !contained {
			return Protection{name, NotEnforced, why}
		}
		if reason, ok := missing(name); ok {
			return Protection{name, NotEnforced, reason}
		}
		return Protection{name, Enforced, detail}
	}
	// layer is a wall that is named in the isolation itself
	// ("namespaces+landlock+seccomp") when it holds.
	layer := func(name, detail string) Protection {
		pr := state(name, detail)
		if pr.State == Enforced && !slices.Contains(strings.Split(walls, "+"), name) {
			return Protection{name, NotEnforced, "not reported by the run"}
		}
		return pr
	}
	var out []Protection
	if landlockMode {
		out = append(out, Protection{"mode", NotEnforced, "Landlock and seccomp without namespaces: " + modeWhy + "; " + NamespacesHint})
	}
	switch {
	case p != nil && !p.Filesystem:
		out = append(out, Protection{"filesystem", Off, `[sandbox] filesystem = "host": programs can write anywhere this user can`})
	case landlockMode:
		out = append(out, state("filesystem", "Landlock: reads only of the system, the runtime's folders and the repository; writes only to the repository's folders and files but .git, omni/ and .omni (but .omni/state), and to a private TMPDIR and HOME; no new files at the repository's top level"))
	default:
		out = append(out, state("filesystem", "system folders read-only; worktree writable except .git, omni/, .omni (but .omni/state) and config files, present or not; empty private /tmp, $TMPDIR, home, /run and /var"))
	}
	if landlockMode {
		out = append(out,
			state("processes", "a subreaper outside the program's Landlock domain ends everything a run starts, setsid children included, and with the server; a session of its own: no terminal to type into"),
			Protection{"/proc", NotEnforced, "the host's /proc: programs see other processes (Landlock keeps their environment and memory out of reach)"},
			Protection{"host sockets", NotEnforced, "Unix sockets on the host (/run/docker.sock, the user's D-Bus) stay reachable: this kernel's Landlock cannot restrict them, and this mode cannot hide /run"})
	} else {
		out = append(out,
			state("processes", "PID namespace and a session of its own: everything a run starts dies with it, and with the server; no terminal to type into"),
			state("/proc", "shows only the run's own processes; kernel settings (/proc/sys) read-only, kernel memory and keys hidden"))
	}
	if p != nil && p.Filesystem && !landlockMode {
		out = append(out, layer("landlock", "filesystem rules enforced a second time by the kernel: reads only of the system, the runtime's folders and the repository; writes only to the worktree, the private temporary folders and the writable paths"))
	}
	out = append(out, layer("seccomp", "denied: keyrings, ptrace, eBPF, perf, userfaultfd, io_uring, mounts, new namespaces, kernel modules, TIOCSTI; with network = false, sockets but Unix ones"))
	switch {
	case p != nil && len(p.Hosts) > 0 && landlockMode:
		out = append(out, Protection{"network hosts", NotEnforced, "[sandbox] network lists hosts, which only the namespace mode enforces: runs are refused here; " + NamespacesHint})
	case p != nil && len(p.Hosts) > 0:
		out = append(out, state("network hosts", "a loopback only, and omnidev's egress proxy as the one way out, to "+strings.Join(p.Hosts, ", ")))
	case network:
		out = append(out, Protection{"network off", Off, "network = true: programs reach the network, loopback included"})
	case landlockMode:
		out = append(out, state("network off", "seccomp: no socket but Unix ones"))
	default:
		out = append(out, state("network off", "no interface but a loopback that is down"))
	}
	if p != nil {
		procs := fmt.Sprintf("cgroup: %d processes and threads ([sandbox] processes)", p.Processes)
		switch {
		case slices.Contains(strings.Split(walls, "+"), "nproc") && landlockMode:
			procs = fmt.Sprintf("RLIMIT_NPROC: %d processes and threads more than this user has ([sandbox] processes; no pids cgroup)", p.Processes)
		case slices.Contains(strings.Split(walls, "+"), "nproc"):
			procs = fmt.Sprintf("RLIMIT_NPROC in the run's user namespace: %d processes and threads ([sandbox] processes; no pids cgroup)", p.Processes)
		}
		out = append(out,
			state("memory limit", fmt.Sprintf("cgroup: %d MiB ([sandbox] memory)", p.MemoryBytes>>20)),
			state("processes limit", procs))
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
