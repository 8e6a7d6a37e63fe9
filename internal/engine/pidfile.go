package engine

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// PIDFileName is the PID file's path relative to the repository root.
const PIDFileName = ".omni/server.pid"

// PIDFile is the PID file this process wrote.
type PIDFile struct {
	path string
	pid  int
	// madeDir: writing the file created .omni, which Remove then removes
	// if it is empty, so that a server that could not start (no omni/
	// here) leaves nothing behind.
	madeDir bool
}

// WritePIDFile records this process as the repository's server. Another
// live server is not an error — several agents may serve one repository —
// but it is worth a warning; the file then names the newest server.
func WritePIDFile(root string, logger *slog.Logger) (*PIDFile, error) {
	path := filepath.Join(root, filepath.FromSlash(PIDFileName))
	if st, err := ReadServerStatus(root); err == nil {
		if st.Running {
			logger.Warn("another omnidev server is serving this repository; this one takes over the PID file", "other_pid", st.PID)
		} else {
			logger.Info("replacing a stale PID file", "dead_pid", st.PID)
		}
	}
	pid := os.Getpid()
	_, err := os.Stat(filepath.Dir(path))
	madeDir := errors.Is(err, fs.ErrNotExist)
	if err := writeFileAtomic(path, []byte(strconv.Itoa(pid)+"\n")); err != nil {
		return nil, fmt.Errorf("write PID file: %w", err)
	}
	return &PIDFile{path: path, pid: pid, madeDir: madeDir}, nil
}

// Remove deletes the PID file only if it still names this process: a newer
// server that took it over keeps it.
func (p *PIDFile) Remove() error {
	data, err := os.ReadFile(p.path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err != nil || pid != p.pid {
		return nil
	}
	if err := os.Remove(p.path); err != nil {
		return err
	}
	if p.madeDir {
		os.Remove(filepath.Dir(p.path)) // fails, as it should, unless empty
	}
	return nil
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
	data, err := os.ReadFile(path)
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
	st := ServerStatus{PID: pid, Running: isOmnidev(pid)}
	if fi, err := os.Stat(path); err == nil {
		st.Since = fi.ModTime()
	}
	return st, nil
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
