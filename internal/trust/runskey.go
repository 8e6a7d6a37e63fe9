package trust

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// RunsKeyFile is the file, beside the approvals, of the key that signs
// the user's run records (see internal/runs): records in a repository's
// .omni/runs that this key did not sign came with the repository (a
// clone can carry any .omni/runs), or from another user, and are not
// read. An undo would otherwise write what such a record says.
const RunsKeyFile = "runs.key"

// RunsKey returns the user's key for signing run records, creating it on
// first use. It fails when there is no config folder (no HOME) or the key
// cannot be read or written; the caller then signs with a key of its own
// process, whose records the next process does not read.
func (s Store) RunsKey() ([]byte, error) {
	if s.Path == "" {
		return nil, errors.New("no config folder to keep the key of run records in: set HOME or XDG_CONFIG_HOME")
	}
	path := filepath.Join(filepath.Dir(s.Path), RunsKeyFile)
	key, err := readKey(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	raw := make([]byte, 32)
	rand.Read(raw)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|noFollow, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return readKey(path) // another process made it first
	}
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	_, werr := f.WriteString(hex.EncodeToString(raw) + "\n")
	if err := errors.Join(werr, f.Close()); err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	return raw, nil
}

// readKey reads a key file: a regular file, opened without following a
// symlink or blocking, of 32 bytes in hex.
func readKey(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|noFollow, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file; remove it", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, 256))
	if err != nil {
		return nil, err
	}
	key, err := hex.DecodeString(strings.TrimSpace(string(data)))
	if err != nil || len(key) != 32 {
		return nil, fmt.Errorf("%s is not a key of 32 bytes in hex; remove it (the runs recorded with it can then not be undone)", path)
	}
	return key, nil
}
