package capability

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

//go:embed all:template/omni
var template embed.FS

// ErrExists reports that Init found an omni/ folder already.
var ErrExists = errors.New("omni/ already exists")

// Init scaffolds omni/ in root: config.toml enabling one example capability
// (capability.toml, index.ts, types.d.ts, a doc and a skill), and adds .omni/
// to .gitignore. It refuses to touch an existing omni/, and it writes the
// tree into a temporary folder first and renames it into place, so a failure
// leaves nothing half-written. It returns the paths it created, relative to root.
func Init(root, project string) ([]string, error) {
	dst := filepath.Join(root, "omni")
	if _, err := os.Lstat(dst); err == nil {
		return nil, fmt.Errorf("init %s: %w; nothing was changed (edit it, or remove it to start over)", dst, ErrExists)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("init: %w", err)
	}
	// An omni/config.toml would take precedence over OmniDev's config,
	// which omnidev reads as it is.
	for _, l := range layouts[1:] {
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(l.Config))); err == nil {
			return nil, fmt.Errorf("%s holds OmniDev's %s, which omnidev reads as it is: run `omnidev doctor`; nothing was changed (an omni/ folder would take its place)",
				root, l.Config)
		}
	}
	tmp, err := os.MkdirTemp(root, ".omni-init-*")
	if err != nil {
		return nil, fmt.Errorf("init: %w", err)
	}
	defer os.RemoveAll(tmp)

	var created []string
	err = fs.WalkDir(template, "template/omni", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(p, "template/")
		target := filepath.Join(tmp, filepath.FromSlash(rel))
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := template.ReadFile(p)
		if err != nil {
			return err
		}
		if rel == "omni/config.toml" {
			data = bytes.Replace(data, []byte(`"PROJECT"`), fmt.Appendf(nil, "%q", project), 1)
		}
		created = append(created, rel)
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		return nil, fmt.Errorf("init: write template: %w", err)
	}
	if err := os.Rename(filepath.Join(tmp, "omni"), dst); err != nil {
		return nil, fmt.Errorf("init: %w", err)
	}
	changed, err := ensureGitignored(root, ".omni/")
	if err != nil {
		return created, fmt.Errorf("init: omni/ created, but .gitignore was not updated: %w", err)
	}
	if changed {
		created = append(created, ".gitignore")
	}
	return created, nil
}

// ensureGitignored appends line to root/.gitignore unless an equivalent line
// is already there. It reports whether it changed the file.
func ensureGitignored(root, line string) (bool, error) {
	path := filepath.Join(root, ".gitignore")
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	want := strings.Trim(line, "/")
	for l := range strings.Lines(string(data)) {
		if strings.Trim(strings.TrimSpace(l), "/") == want {
			return false, nil
		}
	}
	if len(data) > 0 && !bytes.HasSuffix(data, []byte("\n")) {
		data = append(data, '\n')
	}
	data = append(data, line+"\n"...)
	return true, os.WriteFile(path, data, 0o644)
}

// FindRoot returns the repository root for a working directory: the nearest
// folder at or above dir that holds omni/ (or OmniDev's omni.toml or
// .omni/config.toml), else the nearest git root, else an error that says how
// to fix it.
func FindRoot(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("find repository root: %w", err)
	}
	gitRoot := ""
	for d := abs; ; d = filepath.Dir(d) {
		if fi, err := os.Stat(filepath.Join(d, "omni")); err == nil && fi.IsDir() {
			return d, nil
		}
		for _, l := range layouts[1:] {
			if _, err := os.Stat(filepath.Join(d, filepath.FromSlash(l.Config))); err == nil {
				return d, nil
			}
		}
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil && gitRoot == "" {
			gitRoot = d
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	if gitRoot != "" {
		return gitRoot, nil
	}
	return "", fmt.Errorf("no omni/ folder or git repository at or above %s: run `omnidev init` in your repository, or pass --dir", abs)
}
