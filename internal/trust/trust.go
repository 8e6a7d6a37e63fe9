package trust

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// AllEnv, set to 1 in the server's environment, approves every definition:
// for CI and tests, which approve what they run by construction.
const AllEnv = "OMNIDEV_TRUST_ALL"

// maxStoreBytes bounds the store file: a few hundred bytes an approval.
const maxStoreBytes = 4 << 20

// Store is the file of approvals.
type Store struct {
	// Path is the file, "" when no config folder could be found (nothing
	// is approved then, and Approve fails saying why).
	Path string
	all  bool
}

// file is the JSON shape of the store.
type file struct {
	Version int `json:"version"`
	// Approved maps a repository's absolute path to its capabilities'
	// approved definition hashes.
	Approved map[string]map[string]string `json:"approved"`
}

// Open returns the store of the user whose environment is environ: under
// $XDG_CONFIG_HOME/omnidev, else ~/.config/omnidev (on macOS and Windows,
// the system's config folder).
func Open(environ []string) Store {
	get := func(name string) string {
		v := ""
		for _, kv := range environ {
			if val, ok := strings.CutPrefix(kv, name+"="); ok {
				v = val
			}
		}
		return v
	}
	s := Store{all: get(AllEnv) == "1"}
	dir := get("XDG_CONFIG_HOME")
	if dir == "" || !filepath.IsAbs(dir) {
		if home := get("HOME"); home != "" && filepath.IsAbs(home) {
			dir = filepath.Join(home, ".config")
		} else if d, err := os.UserConfigDir(); err == nil {
			dir = d
		}
	}
	if dir != "" {
		s.Path = filepath.Join(dir, "omnidev", "trust.json")
	}
	return s
}

// All reports whether every definition is approved by the environment.
func (s Store) All() bool { return s.all }

// Hash returns the key of a definition's text.
func Hash(definition string) string {
	sum := sha256.Sum256([]byte(definition))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Approved reports whether the user approved definition for capability id
// of the repository at root.
func (s Store) Approved(root, id, definition string) bool {
	if s.all {
		return true
	}
	f, err := s.read()
	if err != nil {
		return false
	}
	return f.Approved[root][id] == Hash(definition)
}

// Approve records definitions (capability id -> definition text) as
// approved for the repository at root, replacing earlier approvals of
// those capabilities. The file is replaced atomically.
func (s Store) Approve(root string, definitions map[string]string) error {
	if s.Path == "" {
		return errors.New("no config folder to keep approvals in: set HOME or XDG_CONFIG_HOME")
	}
	f, err := s.read()
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if f.Approved == nil {
		f.Approved = map[string]map[string]string{}
	}
	if f.Approved[root] == nil {
		f.Approved[root] = map[string]string{}
	}
	for id, def := range definitions {
		f.Approved[root][id] = Hash(def)
	}
	f.Version = 1
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(s.Path), 0o700); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(s.Path), err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.Path), ".trust-*.json")
	if err != nil {
		return fmt.Errorf("write approvals: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("write approvals: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write approvals: %w", err)
	}
	if err := os.Rename(tmp.Name(), s.Path); err != nil {
		return fmt.Errorf("write approvals: %w", err)
	}
	return nil
}

// read reads the store: a regular file, opened without blocking on a FIFO
// or following a symlink, within maxStoreBytes.
func (s Store) read() (file, error) {
	var f file
	if s.Path == "" {
		return f, fs.ErrNotExist
	}
	fh, err := os.OpenFile(s.Path, os.O_RDONLY|syscall.O_NONBLOCK|noFollow, 0)
	if err != nil {
		return f, err
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return f, err
	}
	if !fi.Mode().IsRegular() {
		return f, fmt.Errorf("%s is not a regular file", s.Path)
	}
	data, err := io.ReadAll(io.LimitReader(fh, maxStoreBytes+1))
	if err != nil {
		return f, err
	}
	if len(data) > maxStoreBytes {
		return f, fmt.Errorf("%s is larger than %d MiB", s.Path, maxStoreBytes>>20)
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return f, fmt.Errorf("read %s: %w; remove it and approve again with `omnidev trust`", s.Path, err)
	}
	return f, nil
}
