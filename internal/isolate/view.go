package isolate

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// view is the filesystem a program sees, as mount steps for the init. The
// host's root is made read-only as a whole; then, in order:
//  1. every bind source is cloned (before anything covers it: the
//     repository may live under /tmp or the home folder), resolved with no
//     symlink on the way, so a path a run retargeted is not followed;
//  2. each of Tmpfs gets an empty private tmpfs (/tmp, $TMPDIR, the homes,
//     and the host folders a program has no use for: /run, /var, /srv...);
//  3. each of Masks is hidden: a file behind /dev/null, a folder behind an
//     empty read-only tmpfs;
//  4. the binds are attached at their destinations, in order, so a later
//     bind inside an earlier one wins.
//
// Landlock then limits the program to the paths of Walls, as a second wall
// built from the same plan.
type view struct {
	Binds []bind   `json:"binds"`
	Tmpfs []string `json:"tmpfs"`
	Masks []string `json:"masks"`
	// ReadOnly, ReadWrite and DevFiles are Landlock's rules: the folders a
	// program may read (and run from), those it may also change, and the
	// device files it may read and write.
	ReadOnly  []string `json:"read_only"`
	ReadWrite []string `json:"read_write"`
	// WriteFiles are single files a program may change (the Landlock
	// mode's files at the repository's top level).
	WriteFiles []string `json:"write_files,omitempty"`
	DevFiles   []string `json:"dev_files"`
	// Guarded are the protected paths that are absent or symbolic links
	// when the run is planned: no mount can cover them, so Guard checks
	// them when the run ends.
	Guarded []guarded `json:"-"`
	// Refused says which configured paths were left out, and why.
	Refused []string `json:"-"`
}

type bind struct {
	Path string `json:"path"`
	// Source is where Path really is on the host when a symlink above it
	// leads elsewhere; empty when it is Path.
	Source   string `json:"source,omitempty"`
	Writable bool   `json:"writable,omitempty"`
}

// src returns the host path to clone.
func (b bind) src() string {
	if b.Source != "" {
		return b.Source
	}
	return b.Path
}

// Paths inside a repository that a program must not change, whether or
// not they exist: what git runs later (.git), omnidev's settings, runner
// and generated files (.omni), and everything omnidev reads as
// configuration or runs on the host (the whole omni/ tree, OmniDev's
// omni.toml). .omni/state, where capabilities keep their data, stays
// writable.
var (
	readOnlyInRoot = []string{".git", ".omni", "omni", "omni.toml"}
	writableInRoot = []string{".omni/state"}
)

// ReadOnlyToRuns reports whether rel, a slash path relative to the
// repository root, is one a program may not change: what the server does on
// a program's behalf (runs.undo) must not change it either.
func ReadOnlyToRuns(rel string) bool {
	rel = strings.TrimPrefix(filepath.ToSlash(filepath.Clean(filepath.FromSlash(rel))), "./")
	for _, w := range writableInRoot {
		if rel == w || strings.HasPrefix(rel, w+"/") {
			return false
		}
	}
	for _, p := range readOnlyInRoot {
		if rel == p || strings.HasPrefix(rel, p+"/") {
			return true
		}
	}
	return false
}

// systemHidden are host folders a program gets empty in its view: sockets
// (/run: docker.sock, the user's D-Bus), other users' homes, and the
// places where root keeps files only root may read (/var/lib, /var/log,
// /boot). What a runtime needs there comes back through a bind.
var systemHidden = []string{"/run", "/var", "/home", "/root", "/srv", "/mnt", "/media", "/boot", "/lost+found"}

// systemReadable are the host folders Landlock lets a program read and run
// from, beside the repository, the runtime's folders and the readable
// paths. /proc and /sys are read-only as well: their writable files are
// how root changes the kernel.
var systemReadable = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/nix", "/snap", "/proc", "/sys", "/dev"}

// resolverFiles are what name resolution reads, which may be links into
// /run.
var resolverFiles = []string{"/etc/resolv.conf", "/etc/hosts", "/etc/nsswitch.conf"}

// devFiles are the device files a program may open for writing.
var devFiles = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}

// StateDir is the folder under the root that stays writable inside .omni;
// it must exist before a run, since a read-only .omni cannot get it later.
const StateDir = ".omni/state"

// planView returns the view for prog under p. masks are host paths to hide
// (see secretPaths); runtimePaths are folders the runtime needs.
func planView(prog Program, p *Policy, masks, runtimePaths []string) view {
	var v view
	root := filepath.Clean(prog.Root)
	realRoot := root
	if r, err := filepath.EvalSymlinks(root); err == nil {
		realRoot = r
	}
	v.Tmpfs = hiddenFolders(prog.Env, root)
	v.Binds = append(v.Binds, bind{Path: root, Source: differs(realRoot, root), Writable: true})
	for _, path := range p.Writable {
		b, problem := resolveBind(path, root, realRoot, true)
		switch {
		case problem != "":
			v.Refused = append(v.Refused, problem)
		case b.Path != "":
			v.Binds = append(v.Binds, b)
			v.ReadWrite = append(v.ReadWrite, b.Path)
		}
	}
	// A read-only path only needs a bind where the view hides it or where
	// it lies in a writable part; elsewhere the host's read-only root shows it.
	covered := append([]string{root}, v.Tmpfs...)
	covered = append(covered, masks...)
	for i, path := range slices.Concat(p.Readable, runtimePaths) {
		if i >= len(p.Readable) && under(filepath.Clean(path), []string{root}) {
			// A runtime installed in the repository (npm install -D bun)
			// is there already; its node_modules stays the repository's.
			continue
		}
		b, problem := resolveBind(path, root, realRoot, false)
		switch {
		case problem != "":
			v.Refused = append(v.Refused, problem)
		case b.Path == "":
		case under(b.Path, covered):
			v.Binds = append(v.Binds, b)
			v.ReadOnly = append(v.ReadOnly, b.Path)
		default:
			v.ReadOnly = append(v.ReadOnly, b.Path)
		}
	}
	// With the network on, the resolver's files stay readable where they
	// lead into a hidden folder (/etc/resolv.conf into /run with
	// systemd-resolved).
	if prog.Network {
		for _, f := range resolverFiles {
			real, err := filepath.EvalSymlinks(f)
			if err != nil || real == f || !under(real, v.Tmpfs) {
				continue
			}
			if fi, err := os.Stat(real); err == nil && fi.Mode().IsRegular() {
				v.Binds = append(v.Binds, bind{Path: real})
				v.ReadOnly = append(v.ReadOnly, real)
			}
		}
	}
	// The protected paths come after every writable bind, so that none can
	// reopen them.
	for _, rel := range readOnlyInRoot {
		path := filepath.Join(root, filepath.FromSlash(rel))
		fi, err := os.Lstat(path)
		switch {
		case err == nil && (fi.IsDir() || fi.Mode().IsRegular()):
			v.Binds = append(v.Binds, bind{Path: path, Source: differs(filepath.Join(realRoot, filepath.FromSlash(rel)), path)})
		default:
			// Absent, a symlink, or something else: a mount cannot cover
			// it without following it. Guard undoes what a run did to it.
			v.Guarded = append(v.Guarded, guardOf(path))
		}
	}
	for _, dir := range linkedGitDirs(root) {
		v.Binds = append(v.Binds, bind{Path: dir})
	}
	for _, rel := range writableInRoot {
		path := filepath.Join(root, filepath.FromSlash(rel))
		if fi, err := os.Lstat(path); err == nil && fi.IsDir() {
			v.Binds = append(v.Binds, bind{Path: path, Source: differs(filepath.Join(realRoot, filepath.FromSlash(rel)), path), Writable: true})
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
	v.ReadOnly = append(slices.Clone(systemReadable), v.ReadOnly...)
	v.ReadWrite = append([]string{root}, v.ReadWrite...)
	v.ReadWrite = append(v.ReadWrite, v.Tmpfs...)
	v.ReadWrite = append(v.ReadWrite, "/dev/shm")
	v.DevFiles = devFiles
	return v
}

// differs returns real when it is not path: a bind's Source.
func differs(real, path string) string {
	if real == path {
		return ""
	}
	return real
}

// resolveBind resolves a configured writable or readable path once, here,
// for the init to open without following any symlink. A path inside the
// repository must not go through a symlink (a run could have made one, to
// be bound elsewhere by the next run), nor reach into what a run may not
// change; a path outside it is resolved to where it is now. A missing path
// is skipped: b is empty and so is problem.
func resolveBind(path, root, realRoot string, writable bool) (b bind, problem string) {
	path = filepath.Clean(path)
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return bind{}, ""
	}
	key := "readable"
	if writable {
		key = "writable"
	}
	if under(path, []string{root}) || under(real, []string{realRoot}) {
		rel, err := filepath.Rel(root, path)
		if writable && rel == "." {
			return bind{}, "" // writable already
		}
		if err != nil || real != filepath.Join(realRoot, rel) {
			return bind{}, fmt.Sprintf("[sandbox] %s path %s goes through a symbolic link inside the repository; it is not bound: name the folder it leads to", key, path)
		}
		if writable && rel != "." {
			for _, p := range readOnlyInRoot {
				if under(filepath.ToSlash(rel), []string{p}) || under(p, []string{filepath.ToSlash(rel)}) {
					return bind{}, fmt.Sprintf("[sandbox] writable path %s overlaps %s, which runs may not change; it is not bound", path, p)
				}
			}
		}
	}
	return bind{Path: path, Source: differs(real, path), Writable: writable}, ""
}

// hiddenFolders returns the folders replaced by empty private ones: /tmp,
// $TMPDIR, the program's home and the server's, and systemHidden,
// shallowest first. A folder inside the repository is left to it; one
// holding the repository is replaced and the repository bound back at its
// own path. A symlink is not a folder to mount on: what it leads to is.
func hiddenFolders(env []string, root string) []string {
	candidates := []string{"/tmp", getenv(env, "TMPDIR"), getenv(env, "HOME")}
	if home, err := os.UserHomeDir(); err == nil {
		candidates = append(candidates, home)
	}
	candidates = append(candidates, systemHidden...)
	var out []string
	for _, c := range candidates {
		if c == "" || !filepath.IsAbs(c) {
			continue
		}
		c = filepath.Clean(c)
		if c == "/" || under(c, []string{root}) || slices.Contains(out, c) || !isRealDir(c) {
			continue
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b string) int { return len(a) - len(b) })
	return out
}

// guarded is a protected path that no mount covers, as it was when the run
// was planned.
type guarded struct {
	Path string
	// Exists, and Link is its target when it is a symbolic link.
	Exists bool
	Link   string
}

func guardOf(path string) guarded {
	g := guarded{Path: path}
	if _, err := os.Lstat(path); err == nil {
		g.Exists = true
		g.Link, _ = os.Readlink(path)
	}
	return g
}

// Guard puts back the protected paths no mount covered (see view.Guarded)
// after a run: what the run created there, or put in place of a symbolic
// link, is moved into .omni/quarantine (out of the way of anything that
// reads configuration, and out of the change report), and the link is made
// again. It returns one line per path it had to restore, for the run's
// stderr.
func guard(root string, paths []guarded) (out, stuck []string) {
	for _, g := range paths {
		now := guardOf(g.Path)
		if now == g {
			continue
		}
		rel, _ := filepath.Rel(root, g.Path)
		if now.Exists {
			dir := filepath.Join(root, ".omni", "quarantine")
			if err := os.MkdirAll(dir, 0o700); err != nil {
				out = append(out, fmt.Sprintf("omnidev: the program changed %s, which runs may not change, and it could not be moved aside (%v): remove it before the next run", rel, err))
				stuck = append(stuck, g.Path)
				continue
			}
			dst := filepath.Join(dir, fmt.Sprintf("%s.%d", strings.ReplaceAll(rel, string(filepath.Separator), "_"), time.Now().UnixNano()))
			err := os.Rename(g.Path, dst)
			if err != nil {
				// A folder moves to another parent only if it is writable
				// (its ".." changes): the program may have made it not.
				if fi, lerr := os.Lstat(g.Path); lerr == nil && fi.IsDir() && os.Chmod(g.Path, fi.Mode().Perm()|0o700) == nil {
					err = os.Rename(g.Path, dst)
				}
			}
			if err != nil {
				out = append(out, fmt.Sprintf("omnidev: the program changed %s, which runs may not change, and it could not be moved aside (%v): remove it before the next run", rel, err))
				stuck = append(stuck, g.Path)
				continue
			}
		}
		if g.Exists && g.Link != "" {
			if err := os.Symlink(g.Link, g.Path); err != nil {
				out = append(out, fmt.Sprintf("omnidev: the program removed the symbolic link %s, which runs may not change, and it could not be made again (%v)", rel, err))
				continue
			}
		}
		out = append(out, fmt.Sprintf("omnidev: the program changed %s, which runs may not create or change (omnidev's configuration); it was put back as it was, what the program wrote is in .omni/quarantine", rel))
	}
	return out, stuck
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
//
// A folder named by the program's environment that the server's own does
// not name (a value from the configuration: [env] DENO_DIR = "~/.ssh") is
// refused when it lies in a folder the view hides: the configuration could
// otherwise show a program any hidden folder. refused says which, for
// doctor and the run's report. A folder inside the repository at root (a
// runtime from `npm install -D`) is no such folder: the view shows the
// repository, and (in the namespace mode) keeps the runtime's packages
// read-only there, so that a program cannot plant another runtime for the
// next run, or for a person.
func RuntimePaths(runtime, root string, env []string) (paths, refused []string) {
	hidden := hiddenFolders(env, "/nonexistent-root")
	serverPath := filepath.SplitList(os.Getenv("PATH"))
	serverHome, _ := os.UserHomeDir()
	add := func(p string, trusted bool, from string) {
		if p == "" || !filepath.IsAbs(p) || !isDir(p) {
			return
		}
		p = filepath.Clean(p)
		if slices.Contains(paths, p) {
			return
		}
		if !trusted && under(p, hidden) && (root == "" || !under(p, []string{root})) {
			refused = append(refused, fmt.Sprintf("%s (from %s) lies in a folder the sandbox hides; it is not shown to programs: set it in the server's own environment if the runtime needs it", p, from))
			return
		}
		paths = append(paths, p)
	}
	if real, err := filepath.EvalSymlinks(runtime); err == nil {
		add(packagesOf(packageRoot(filepath.Dir(real))), slices.Contains(serverPath, filepath.Dir(runtime)), "the runtime's path")
	}
	for _, dir := range filepath.SplitList(getenv(env, "PATH")) {
		add(dir, slices.Contains(serverPath, dir), "PATH")
	}
	home := getenv(env, "HOME")
	homeTrusted := home != "" && home == serverHome
	for _, v := range []struct{ name, def string }{{"BUN_INSTALL", ".bun"}, {"DENO_DIR", ".cache/deno"}} {
		if val := getenv(env, v.name); val != "" {
			add(val, val == os.Getenv(v.name), v.name)
		} else if home != "" {
			add(filepath.Join(home, v.def), homeTrusted, "HOME")
		}
	}
	if home != "" {
		add(filepath.Join(home, ".deno"), homeTrusted, "HOME")
	}
	return paths, refused
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

// packagesOf returns the node_modules folder holding the package at dir,
// else dir: an npm package loads its dependencies from beside it (tsx its
// esbuild), so its siblings must be readable too.
func packagesOf(dir string) string {
	for d := dir; d != filepath.Dir(d); d = filepath.Dir(d) {
		if filepath.Base(d) == "node_modules" {
			return d
		}
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

// setenv returns env with name set to value.
func setenv(env []string, name, value string) []string {
	out := slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, name+"=") })
	return append(out, name+"="+value)
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

// isRealDir reports whether path is a folder and not a symbolic link.
func isRealDir(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.IsDir()
}

// Refusals lists the configured paths a run of prog under p would not be
// shown, and why: writable or readable paths through a symlink in the
// repository or over what runs may not change, and runtime folders the
// configuration names inside a hidden folder. doctor reports them.
func Refusals(prog Program, p *Policy) []string {
	if p == nil || !p.Filesystem {
		return nil
	}
	paths, refused := RuntimePaths(prog.Path, prog.Root, prog.Env)
	v := planView(prog, p, nil, paths)
	return append(refused, v.Refused...)
}
