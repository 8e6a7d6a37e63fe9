package isolate

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// view is the filesystem a program sees, as mount steps for the init. The
// host's root is made read-only as a whole; then, in order:
//  1. every bind source is cloned (before anything covers it: the
//     repository may live under /tmp or the home folder);
//  2. each of Tmpfs gets an empty private tmpfs (/tmp, $TMPDIR, the home);
//  3. each of Masks is hidden: a file behind /dev/null, a folder behind an
//     empty read-only tmpfs;
//  4. the binds are attached at their destinations, in order, so a later
//     bind inside an earlier one wins.
type view struct {
	Binds []bind   `json:"binds"`
	Tmpfs []string `json:"tmpfs"`
	Masks []string `json:"masks"`
}

type bind struct {
	Path     string `json:"path"`
	Writable bool   `json:"writable,omitempty"`
}

// Paths inside a repository that a program must not change: what git runs
// later (.git), omnidev's settings, runner and generated files (.omni), and
// the committed config (omni/config.toml, or omni.toml in OmniDev's
// layout). .omni/state, where capabilities keep their data, stays writable.
var (
	readOnlyInRoot = []string{".git", ".omni", "omni/config.toml", "omni.toml"}
	writableInRoot = []string{".omni/state"}
)

// StateDir is the folder under the root that stays writable inside .omni;
// it must exist before a run, since a read-only .omni cannot get it later.
const StateDir = ".omni/state"

// planView returns the view for prog under p. masks are host paths to hide
// (see secretPaths); runtimePaths are folders the runtime needs.
func planView(prog Program, p *Policy, masks, runtimePaths []string) view {
	var v view
	root := filepath.Clean(prog.Root)
	v.Tmpfs = hiddenFolders(prog.Env, root)
	v.Binds = append(v.Binds, bind{Path: root, Writable: true})
	// omni/ itself becomes a mount point: a program could otherwise move
	// the folder aside and write a new omni/config.toml in its place.
	if isDir(filepath.Join(root, "omni")) {
		v.Binds = append(v.Binds, bind{Path: filepath.Join(root, "omni"), Writable: true})
	}
	for _, rel := range readOnlyInRoot {
		if path := filepath.Join(root, filepath.FromSlash(rel)); exists(path) {
			v.Binds = append(v.Binds, bind{Path: path})
		}
	}
	for _, dir := range linkedGitDirs(root) {
		v.Binds = append(v.Binds, bind{Path: dir})
	}
	for _, rel := range writableInRoot {
		if path := filepath.Join(root, filepath.FromSlash(rel)); isDir(path) {
			v.Binds = append(v.Binds, bind{Path: path, Writable: true})
		}
	}
	for _, path := range p.Writable {
		if exists(path) {
			v.Binds = append(v.Binds, bind{Path: filepath.Clean(path), Writable: true})
		}
	}
	// A read-only path only needs a bind where the view hides it or where
	// it lies in a writable part; elsewhere the host's read-only root shows it.
	covered := append([]string{root}, v.Tmpfs...)
	covered = append(covered, masks...)
	for _, path := range slices.Concat(p.Readable, runtimePaths) {
		path = filepath.Clean(path)
		if exists(path) && under(path, covered) {
			v.Binds = append(v.Binds, bind{Path: path})
		}
	}
	for _, m := range masks {
		switch {
		case under(m, v.Tmpfs):
		case slices.ContainsFunc(v.Binds, func(b bind) bool { return under(b.Path, []string{m}) }):
			// A bind must be attached inside it: an empty private folder
			// rather than a read-only one.
			v.Tmpfs = append(v.Tmpfs, m)
		default:
			v.Masks = append(v.Masks, m)
		}
	}
	return v
}

// hiddenFolders returns the folders replaced by empty private ones: /tmp,
// $TMPDIR, the program's home and the server's, shallowest first. A folder
// inside the repository is left to it; one holding the repository is
// replaced and the repository bound back at its own path.
func hiddenFolders(env []string, root string) []string {
	candidates := []string{"/tmp", getenv(env, "TMPDIR"), getenv(env, "HOME")}
	if home, err := os.UserHomeDir(); err == nil {
		candidates = append(candidates, home)
	}
	var out []string
	for _, c := range candidates {
		if c == "" || !filepath.IsAbs(c) {
			continue
		}
		c = filepath.Clean(c)
		if c == "/" || under(c, []string{root}) || slices.Contains(out, c) || !isDir(c) {
			continue
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b string) int { return len(a) - len(b) })
	return out
}

// linkedGitDirs returns the git folders of a linked worktree (its .git is a
// file "gitdir: <path>"): the worktree's own folder and the common one.
func linkedGitDirs(root string) []string {
	data, err := os.ReadFile(filepath.Join(root, ".git"))
	if err != nil {
		return nil
	}
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
	if !ok {
		return nil
	}
	gitdir = strings.TrimSpace(gitdir)
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(root, gitdir)
	}
	dirs := []string{filepath.Clean(gitdir)}
	if data, err := os.ReadFile(filepath.Join(gitdir, "commondir")); err == nil {
		common := strings.TrimSpace(string(data))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitdir, common)
		}
		dirs = append(dirs, filepath.Clean(common))
	}
	var out []string
	for _, d := range dirs {
		if isDir(d) && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// RuntimePaths returns the host folders a runtime needs, which the view
// keeps visible read-only even where it hides their parent (an install in
// the home folder): the runtime's package (from the real path of the
// program, up to the folder holding its package.json; else its own folder),
// every absolute folder on the program's PATH, and the caches of Bun and
// Deno when they exist ($BUN_INSTALL or ~/.bun, $DENO_DIR or
// ~/.cache/deno, ~/.deno).
func RuntimePaths(runtime string, env []string) []string {
	var out []string
	add := func(p string) {
		if p != "" && filepath.IsAbs(p) && isDir(p) && !slices.Contains(out, filepath.Clean(p)) {
			out = append(out, filepath.Clean(p))
		}
	}
	if real, err := filepath.EvalSymlinks(runtime); err == nil {
		add(packageRoot(filepath.Dir(real)))
	}
	for _, dir := range filepath.SplitList(getenv(env, "PATH")) {
		add(dir)
	}
	home := getenv(env, "HOME")
	if v := getenv(env, "BUN_INSTALL"); v != "" {
		add(v)
	} else if home != "" {
		add(filepath.Join(home, ".bun"))
	}
	if v := getenv(env, "DENO_DIR"); v != "" {
		add(v)
	} else if home != "" {
		add(filepath.Join(home, ".cache", "deno"))
	}
	if home != "" {
		add(filepath.Join(home, ".deno"))
	}
	return out
}

// packageRoot returns the nearest folder at or above dir holding a
// package.json, within four levels (bin/ inside an npm package); else dir.
func packageRoot(dir string) string {
	d := dir
	for range 4 {
		if exists(filepath.Join(d, "package.json")) {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	return dir
}

// under reports whether path is one of dirs or inside one.
func under(path string, dirs []string) bool {
	for _, d := range dirs {
		if path == d || strings.HasPrefix(path, strings.TrimSuffix(d, "/")+"/") {
			return true
		}
	}
	return false
}

func getenv(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if val, ok := strings.CutPrefix(kv, name+"="); ok {
			v = val
		}
	}
	return v
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}
