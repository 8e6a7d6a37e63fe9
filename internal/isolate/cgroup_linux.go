//go:build linux

package isolate

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cgroupHost is where this process may create the cgroups of its runs: a
// folder per limit (the same one twice on cgroup v2), or why not.
type cgroupHost struct {
	memory, pids       string
	memoryWhy, pidsWhy string
	v2                 bool
}

// cgroup is one run's cgroups.
type cgroup struct {
	dirs   []string
	memory string // the folder holding the memory controller's files
	pids   string // the folder holding the pids controller's files
	v2     bool
}

// runPrefix starts the name of every run's cgroup, followed by the
// server's pid: a cgroup left by a server that died is removed by the
// next one.
const runPrefix = "omnidev-"

// findCgroups looks for a cgroup v2 folder delegated to us with the memory
// and pids controllers enabled for subgroups, else for cgroup v1 memory and
// pids hierarchies we can write to.
func findCgroups() cgroupHost {
	var h cgroupHost
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		h.memoryWhy, h.pidsWhy = "cannot read /proc/self/cgroup", "cannot read /proc/self/cgroup"
		return h
	}
	defer f.Close()
	v1 := map[string]string{}
	v2path := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			v2path = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			v1[c] = parts[2]
		}
	}
	if v2path != "" {
		for _, base := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"} {
			dir := filepath.Join(base, v2path)
			ctl, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
			if err != nil {
				continue
			}
			enabled := strings.Fields(string(ctl))
			if contains(enabled, "memory") && contains(enabled, "pids") && writable(dir) {
				removeStale(dir)
				return cgroupHost{memory: dir, pids: dir, v2: true}
			}
		}
	}
	h.memory, h.memoryWhy = v1Folder("memory", v1)
	h.pids, h.pidsWhy = v1Folder("pids", v1)
	return h
}

func v1Folder(controller string, v1 map[string]string) (string, string) {
	path, ok := v1[controller]
	if !ok {
		return "", "no cgroup v2 delegated with memory and pids enabled, and no cgroup v1 " + controller + " hierarchy"
	}
	dir := filepath.Join("/sys/fs/cgroup", controller, path)
	if !writable(dir) {
		return "", fmt.Sprintf("no cgroup v2 delegated with memory and pids enabled, and cgroup v1 %s (%s) is not writable by this user", controller, dir)
	}
	removeStale(dir)
	return dir, ""
}

// writable reports whether we can create a cgroup in dir, by doing it.
func writable(dir string) bool {
	d, err := os.MkdirTemp(dir, runPrefix+"probe-")
	if err != nil {
		return false
	}
	os.Remove(d)
	return true
}

// removeStale removes the run cgroups left by servers no longer running.
func removeStale(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), runPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || syscall.Kill(pid, 0) != syscall.ESRCH {
			continue
		}
		os.Remove(filepath.Join(dir, e.Name()))
	}
}

// join creates the run's cgroups with p's limits and moves pid into them.
// What cannot be enforced is added to notEnforced.
// systemdHint says how an ordinary user gets a cgroup of their own.
const systemdHint = "; where systemd runs, start the server as `systemd-run --user --scope -p Delegate=yes omnidev serve` to give it one"

func (h *cgroupHost) join(pid int, p *Policy, notEnforced []string) (*cgroup, []string) {
	cg := &cgroup{v2: h.v2}
	procs := map[string]bool{}
	try := func(base string, files [][2]string) error {
		if base == "" {
			return errors.New("no cgroup")
		}
		dir := ""
		for _, d := range cg.dirs {
			if filepath.Dir(d) == base {
				dir = d
			}
		}
		if dir == "" {
			d, err := os.MkdirTemp(base, fmt.Sprintf("%s%d-", runPrefix, os.Getpid()))
			if err != nil {
				return err
			}
			dir = d
			cg.dirs = append(cg.dirs, dir)
		}
		for _, f := range files {
			path := filepath.Join(dir, f[0])
			if _, err := os.Stat(path); err != nil && isSwapFile(f[0]) {
				continue // swap accounting is optional in the kernel
			}
			if err := os.WriteFile(path, []byte(f[1]), 0); err != nil {
				return fmt.Errorf("set %s: %w", f[0], err)
			}
		}
		if !procs[dir] {
			if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
				return fmt.Errorf("join %s: %w", dir, err)
			}
			procs[dir] = true
		}
		return nil
	}
	if p.MemoryBytes > 0 {
		limit := strconv.FormatInt(p.MemoryBytes, 10)
		files := [][2]string{{"memory.limit_in_bytes", limit}, {"memory.memsw.limit_in_bytes", limit}}
		if h.v2 {
			files = [][2]string{{"memory.max", limit}, {"memory.swap.max", "0"}}
		}
		err := try(h.memory, files)
		switch {
		case h.memory == "":
			notEnforced = append(notEnforced, "memory limit ("+h.memoryWhy+systemdHint+")")
		case err != nil:
			notEnforced = append(notEnforced, fmt.Sprintf("memory limit (%v)", err))
		default:
			for _, d := range cg.dirs {
				if filepath.Dir(d) == h.memory {
					cg.memory = d
				}
			}
		}
	}
	if p.Processes > 0 {
		err := try(h.pids, [][2]string{{"pids.max", strconv.Itoa(p.Processes)}})
		switch {
		case h.pids == "" && p.nproc:
			// The init set RLIMIT_NPROC instead (see initSpec.NProc).
		case h.pids == "":
			notEnforced = append(notEnforced, "processes limit ("+h.pidsWhy+systemdHint+")")
		case err != nil:
			notEnforced = append(notEnforced, fmt.Sprintf("processes limit (%v)", err))
		default:
			for _, d := range cg.dirs {
				if filepath.Dir(d) == h.pids {
					cg.pids = d
				}
			}
		}
	}
	return cg, notEnforced
}

// oomKilled reports whether the kernel killed a process of the run for
// going over its memory limit.
func (cg *cgroup) oomKilled() bool {
	if cg.memory == "" {
		return false
	}
	name := "memory.oom_control"
	if cg.v2 {
		name = "memory.events"
	}
	return counter(cg.memory, name, "oom_kill") > 0
}

// pidsMaxed reports whether a fork or a thread of the run was refused for
// going over the processes limit.
func (cg *cgroup) pidsMaxed() bool {
	return cg.pids != "" && counter(cg.pids, "pids.events", "max") > 0
}

// counter reads the "key N" line of a cgroup file; 0 when absent.
func counter(dir, file, key string) int {
	data, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, key+" "); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

// remove removes the run's cgroups. Every process of the run is gone (the
// init was reaped, and the PID namespace dies before its init is), but the
// kernel may take a moment to let go of the folder.
func (cg *cgroup) remove() {
	for _, d := range cg.dirs {
		for i := 0; ; i++ {
			err := os.Remove(d)
			if err == nil || errors.Is(err, os.ErrNotExist) || i == 20 {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// isSwapFile reports whether a cgroup file limits swap, which kernels may
// not account.
func isSwapFile(name string) bool {
	return name == "memory.memsw.limit_in_bytes" || name == "memory.swap.max"
}

// add moves the process pid (text) into every cgroup of the run.
func (cg *cgroup) add(pid string) error {
	for _, d := range cg.dirs {
		if err := os.WriteFile(filepath.Join(d, "cgroup.procs"), []byte(pid), 0); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("put the runtime in %s: %w", d, err)
		}
	}
	return nil
}
