package engine

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/omnidev/omnidev/internal/changes"
)

// PIDFileName is the PID file's path relative to the repository root: it
// names the newest server.
const PIDFileName = ".omni/server.pid"

// ServersDir holds one file per live server, named by its process id:
// several agents may serve one repository, and status and stop must see
// them all, whichever one PIDFileName names.
const ServersDir = ".omni/servers"

// PIDFile is the PID file this process wrote.
type PIDFile struct {
	root string
	path string // PIDFileName
	own  string // this server's file in ServersDir
	pid  int
	// madeDir: writing the file created .omni, which Remove then removes
	// if it is empty, so that a server that could not start (no omni/
	// here) leaves nothing behind.
	madeDir bool
}

// WritePIDFile records this process as a server of the repository.
// Another live server is not an error — several agents may serve one
// repository — but it is worth a warning; PIDFileName then names the newest
// server, and ServersDir lists them all.
func WritePIDFile(root string, logger *slog.Logger) (*PIDFile, error) {
	// The PID file is written before engine.Open checks .omni: a clone's
	// symlinked .omni or .omni/servers would have it written, and stale
	// files removed, wherever the link leads.
	if err := checkOwnFolders(root); err != nil {
		return nil, err
	}
	path := filepath.Join(root, filepath.FromSlash(PIDFileName))
	pid := os.Getpid()
	servers, _ := ReadServers(root)
	for _, st := range servers {
		switch {
		case st.PID == pid:
		case st.Running:
			logger.Warn("another omnidev server is serving this repository; both are tracked (`omnidev status` lists them, `omnidev stop` stops them)", "other_pid", st.PID)
		default:
			logger.Info("replacing a stale PID file", "dead_pid", st.PID)
			os.Remove(serverFile(root, st.PID))
		}
	}
	_, err := os.Stat(filepath.Dir(path))
	madeDir := errors.Is(err, fs.ErrNotExist)
	data := []byte(strconv.Itoa(pid) + "\n")
	own := serverFile(root, pid)
	if err := writeFileAtomic(own, data); err != nil {
		return nil, fmt.Errorf("write PID file: %w", err)
	}
	if err := writeFileAtomic(path, data); err != nil {
		os.Remove(own)
		return nil, fmt.Errorf("write PID file: %w", err)
	}
	return &PIDFile{root: root, path: path, own: own, pid: pid, madeDir: madeDir}, nil
}

func serverFile(root string, pid int) string {
	return filepath.Join(root, filepath.FromSlash(ServersDir), strconv.Itoa(pid))
}

// Remove deletes this server's files. PIDFileName is removed only if it
// still names this process, and when another server is still running it
// is made to name that one instead: a server never removes a PID file that
// is not its own, nor leaves a live one untracked.
func (p *PIDFile) Remove() error {
	os.Remove(p.own)
	os.Remove(filepath.Dir(p.own)) // fails, as it should, unless empty
	data, err := readOwnFile(p.root, p.path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err != nil || pid != p.pid {
		return nil
	}
	servers, _ := ReadServers(p.root)
	for _, st := range slices.Backward(servers) {
		if st.Running && st.PID != p.pid {
			return writeFileAtomic(p.path, []byte(strconv.Itoa(st.PID)+"\n"))
		}
	}
	if err := os.Remove(p.path); err != nil {
		return err
	}
	if p.madeDir {
		os.Remove(filepath.Dir(p.path)) // fails, as it should, unless empty
	}
	return nil
}

// ReadServers returns every server PIDFileName and ServersDir name, the
// oldest first, the newest (PIDFileName's) last; ErrNoServer when none is.
func ReadServers(root string) ([]ServerStatus, error) {
	var out []ServerStatus
	seen := map[int]bool{}
	// A clone's .omni/servers may be a symlink: the files of the folder it
	// leads to, named by numbers, would be taken for stale servers and
	// removed. Nothing is read through it.
	var entries []os.DirEntry
	if checkOwnFolders(root) == nil {
		entries, _ = os.ReadDir(filepath.Join(root, filepath.FromSlash(ServersDir)))
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		st := ServerStatus{PID: pid, Running: isServer(pid, root)}
		if fi, err := e.Info(); err == nil {
			st.Since = fi.ModTime()
		}
		seen[pid] = true
		out = append(out, st)
	}
	main, err := ReadServerStatus(root)
	if err != nil && !errors.Is(err, ErrNoServer) {
		return out, err
	}
	if err == nil && !seen[main.PID] {
		out = append(out, main)
	}
	slices.SortStableFunc(out, func(a, b ServerStatus) int {
		if a.PID == main.PID {
			return 1
		}
		if b.PID == main.PID {
			return -1
		}
		return a.Since.Compare(b.Since)
	})
	if len(out) == 0 {
		return nil, ErrNoServer
	}
	return out, nil
}

// ServerStatus is what the PID file says about a repository's server.
type ServerStatus struct {
	PID int
	// Since is when the PID file was written.
	Since time.Time
	// Running is false for a stale file: its process is gone, or is not omnidev.
	Running bool
}

// ErrNoServer reports that a repository has no PID file.
var ErrNoServer = errors.New("no omnidev server is running for this repository")

// ReadServerStatus reads the repository's PID file and checks its process.
func ReadServerStatus(root string) (ServerStatus, error) {
	path := filepath.Join(root, filepath.FromSlash(PIDFileName))
	data, err := readOwnFile(root, path)
	if errors.Is(err, fs.ErrNotExist) {
		return ServerStatus{}, ErrNoServer
	}
	if err != nil {
		return ServerStatus{}, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 {
		return ServerStatus{}, fmt.Errorf("%s does not hold a process id (%q): remove it", PIDFileName, bytes.TrimSpace(data))
	}
	st := ServerStatus{PID: pid, Running: isServer(pid, root)}
	if fi, err := os.Stat(path); err == nil {
		st.Since = fi.ModTime()
	}
	return st, nil
}

// isServer reports whether pid is a live omnidev process serving the
// repository at root. A PID file may name another process: a reused PID,
// or one a clone's author chose (.omni comes with a clone), such as the
// user's server of another repository, which stop would end. Where /proc
// tells, the process must work in root or hold a file of root's .omni
// open (its index's lock); elsewhere its name is all there is to check.
func isServer(pid int, root string) bool {
	if !isOmnidev(pid) {
		return false
	}
	proc := fmt.Sprintf("/proc/%d", pid)
	if _, err := os.Stat(proc); err != nil {
		return true
	}
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	if cwd, err := os.Readlink(proc + "/cwd"); err == nil && cwd == root {
		return true
	}
	own := filepath.Join(root, ".omni") + string(filepath.Separator)
	fds, _ := os.ReadDir(proc + "/fd")
	for _, fd := range fds {
		if target, err := os.Readlink(proc + "/fd/" + fd.Name()); err == nil && strings.HasPrefix(target, own) {
			return true
		}
	}
	return false
}

// isOmnidev reports whether pid is a live omnidev process. The name check
// guards against a reused PID naming some unrelated process.
func isOmnidev(pid int) bool {
	if processGone(pid) {
		return false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return true // no /proc: a live process is the best we can tell
	}
	argv0, _, _ := bytes.Cut(cmdline, []byte{0})
	return strings.Contains(filepath.Base(string(argv0)), "omnidev")
}

// writeFileAtomic writes data to a temporary file beside path and renames it
// into place, so readers see the old content or the new, never a part.
func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}

// realFolder reports whether path is a folder, not a symlink to one.
// maxOwnFileBytes bounds the PID file and server.json.
const maxOwnFileBytes = 4096

// readOwnFile reads a small file omnidev wrote in .omni (the PID file,
// server.json): a clone may hold any of them, a FIFO (an open that blocks,
// SIGTERM or not), a symlink to /dev/zero (a read that never ends), or
// .omni a symlink. So it reads a regular file only, through no symlink,
// within maxOwnFileBytes.
func readOwnFile(root, path string) ([]byte, error) {
	if err := checkOwnFolders(root); err != nil {
		return nil, err
	}
	return changes.ReadFile(path, false, maxOwnFileBytes)
}
