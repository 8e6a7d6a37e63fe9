package changes

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/config"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// basePatterns reads the ignore rules that apply above root's own
// .gitignore, lowest priority first: the global excludes file,
// info/exclude, then the .gitignore files from the worktree top down to
// root's parent.
func basePatterns(root string, r repository) []gitignore.Pattern {
	var ps []gitignore.Pattern
	if path := excludesFile(r.store); path != "" {
		ps = append(ps, readPatterns(path, nil)...)
	}
	if r.store == nil {
		return ps
	}
	// Through go-git's filesystem: in a linked worktree, info/ lives in
	// the main repository's git folder.
	if f, err := r.store.Filesystem().Open("info/exclude"); err == nil {
		data, _ := io.ReadAll(f)
		f.Close()
		ps = append(ps, parsePatterns(data, nil)...)
	}
	top := root
	for range r.topDir {
		top = filepath.Dir(top)
	}
	for i := range r.topDir {
		dir := filepath.Join(append([]string{top}, r.topDir[:i]...)...)
		ps = append(ps, readPatterns(filepath.Join(dir, ".gitignore"), r.topDir[:i:i])...)
	}
	return ps
}

// excludesFile returns the path of the global excludes file as git finds
// it: core.excludesFile from the most specific config that sets it (the
// repository's, ~/.gitconfig, $XDG_CONFIG_HOME/git/config, /etc/gitconfig),
// else $XDG_CONFIG_HOME/git/ignore. go-git's LoadGlobalPatterns reads only
// ~/.gitconfig and misses the XDG default, which is where most users'
// global ignores live.
func excludesFile(store *filesystem.Storage) string {
	home, _ := os.UserHomeDir()
	xdg := os.Getenv("XDG_CONFIG_HOME")
	if xdg == "" && home != "" {
		xdg = filepath.Join(home, ".config")
	}
	expand := func(p string) string {
		if rest, ok := strings.CutPrefix(p, "~/"); ok && home != "" {
			return filepath.Join(home, rest)
		}
		return p
	}
	if store != nil {
		if cfg, err := store.Config(); err == nil {
			if p := cfg.Raw.Section("core").Option("excludesfile"); p != "" {
				return expand(p)
			}
		}
	}
	var files []string // most specific first
	if g := os.Getenv("GIT_CONFIG_GLOBAL"); g != "" {
		files = append(files, g)
	} else {
		if home != "" {
			files = append(files, filepath.Join(home, ".gitconfig"))
		}
		if xdg != "" {
			files = append(files, filepath.Join(xdg, "git", "config"))
		}
	}
	if os.Getenv("GIT_CONFIG_NOSYSTEM") == "" {
		files = append(files, "/etc/gitconfig")
	}
	for _, f := range files {
		if p := configExcludesFile(f); p != "" {
			return expand(p)
		}
	}
	if xdg == "" {
		return ""
	}
	return filepath.Join(xdg, "git", "ignore")
}

// configExcludesFile returns core.excludesFile from one git config file.
func configExcludesFile(path string) string {
	data, err := readRegular(path, maxPatternBytes)
	if err != nil {
		return ""
	}
	cfg := config.New()
	if err := config.NewDecoder(bytes.NewReader(data)).Decode(cfg); err != nil {
		return ""
	}
	return cfg.Section("core").Option("excludesfile")
}
