//go:build linux

package isolate

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"

	"github.com/landlock-lsm/go-landlock/landlock"
	"golang.org/x/sys/unix"
)

// wallsReport is what the init tells the parent, after statusReady, about
// the layers it raised: those that hold, and those the kernel lacks, with
// why.
type wallsReport struct {
	Held    []string `json:"held"`
	Missing []string `json:"missing,omitempty"`
}

// raiseWalls restricts the init, and so the runtime it starts, with
// Landlock (the view's paths, and IPC scopes) and seccomp (see
// seccompPolicy), after the view is mounted and privileges dropped. It
// returns the wallsReport to send. Landlock is best effort: a kernel
// without it runs with the namespaces and seccomp, and the report says so;
// seccomp is required.
func raiseWalls(spec initSpec) (string, error) {
	var rep wallsReport
	abi := landlockABI()
	switch {
	case abi < 2:
		rep.Missing = append(rep.Missing, fmt.Sprintf("landlock (the kernel has no Landlock ABI 2 or later: ABI %d)", abi))
	default:
		if err := restrictPaths(spec.View); err != nil {
			return "", fmt.Errorf("landlock: %w", err)
		}
		rep.Held = append(rep.Held, "landlock")
	}
	if err := loadSeccomp(spec.Network || spec.Egress, spec.Mode == ModeLandlock); err != nil {
		return "", fmt.Errorf("seccomp: %w", err)
	}
	rep.Held = append(rep.Held, "seccomp")
	if spec.Egress {
		rep.Held = append(rep.Held, "egress")
	}
	if spec.NProc > 0 {
		n := uint64(spec.NProc)
		if spec.Mode == ModeLandlock {
			n += uint64(userTasks(os.Getuid()))
		}
		if err := unix.Setrlimit(unix.RLIMIT_NPROC, &unix.Rlimit{Cur: n, Max: n}); err != nil {
			return "", fmt.Errorf("limit processes: %w", err)
		}
		rep.Held = append(rep.Held, "nproc")
	}
	data, err := json.Marshal(rep)
	if err != nil {
		return "", err
	}
	return string(data), nil
}

// landlockABI returns the kernel's Landlock ABI version, 0 without one.
func landlockABI() int {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0
	}
	return int(v)
}

// restrictPaths applies the view's Landlock rules; with no view (the
// host's filesystem, by the user's choice) only the IPC scopes: no abstract
// Unix socket or signal reaches past the run.
func restrictPaths(v *view) error {
	cfg := landlock.V7
	if v == nil {
		return landlock.Config{Scoped: cfg.Scoped}.BestEffort().RestrictScoped()
	}
	c := landlock.Config{HandledAccessFS: cfg.HandledAccessFS, Scoped: cfg.Scoped}.BestEffort()
	// A rule on a file may only grant a file's rights.
	roDirs, roFiles := splitFiles(v.ReadOnly)
	rwDirs, rwFiles := splitFiles(v.ReadWrite)
	return c.Restrict(
		landlock.RODirs(roDirs...).IgnoreIfMissing(),
		landlock.ROFiles(roFiles...).IgnoreIfMissing(),
		landlock.RWDirs(rwDirs...).WithRefer().IgnoreIfMissing(),
		landlock.RWFiles(slices.Concat(rwFiles, v.DevFiles, v.WriteFiles)...).IgnoreIfMissing(),
	)
}

// splitFiles parts paths into folders and everything else.
func splitFiles(paths []string) (dirs, files []string) {
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			files = append(files, p)
		} else {
			dirs = append(dirs, p)
		}
	}
	return dirs, files
}

// userTasks counts the processes and threads of uid, as RLIMIT_NPROC does.
func userTasks(uid int) int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		var st unix.Stat_t
		if unix.Stat("/proc/"+e.Name(), &st) != nil || int(st.Uid) != uid {
			continue
		}
		if tasks, err := os.ReadDir("/proc/" + e.Name() + "/task"); err == nil {
			n += len(tasks)
		}
	}
	return n
}
