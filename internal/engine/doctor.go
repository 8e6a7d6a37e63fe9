package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"

	"github.com/omnidev/omnidev/internal/capability"
	"github.com/omnidev/omnidev/internal/execute"
	"github.com/omnidev/omnidev/internal/isolate"
)

// Diagnosis is what `omnidev doctor` found out about a repository.
type Diagnosis struct {
	Root string
	// Registry is nil when the config could not be loaded (ConfigErr).
	Registry  *capability.Registry
	ConfigErr error
	// Files are the config files that were read, relative to Root: the
	// layout's config, then those of .omni/ that exist.
	Files   []string
	Runtime RuntimeInfo
	// Git describes the repository's git state in a few words.
	Git    string
	Server string
	// Wrapped lists the MCP servers that enabled capabilities wrap, each
	// started once to see whether it answers and with how many tools.
	Wrapped []WrappedServer
	// Protections lists what contains a run and whether this machine
	// enforces it; RuntimePaths are the runtime's folders a run sees
	// read-only. Both are empty when the config or the runtime is missing.
	Protections  []isolate.Protection
	RuntimePaths []string
	// Init is the program runs start in as their first process;
	// InitProblem says why the helper beside omnidev is not that program.
	Init, InitProblem string
}

// RuntimeInfo describes the runtime executed code would use.
type RuntimeInfo struct {
	Name    string // preset name, or the explicit command
	Path    string
	Version string
	// Err is set when the runtime cannot be found; it says how to install it.
	Err error
	// Install, with Err, is the install that works for the user running
	// doctor, checked on this machine; "" for an explicit command.
	Install string
}

// CanServe reports whether a server could serve this repository and run
// programs in it.
func (d *Diagnosis) CanServe() bool { return d.ConfigErr == nil && d.Runtime.Err == nil }

// OK reports whether nothing is wrong: the repository can be served and
// no problem was reported (warnings aside), so CI can gate on it.
func (d *Diagnosis) OK() bool { return d.CanServe() && len(d.Registry.Problems) == 0 }

// EnableHint says how to enable the capability folder id in reg's layout.
func EnableHint(reg *capability.Registry, id string) string {
	if reg.Layout.OmniDev() {
		return fmt.Sprintf("add %q to [profiles.%s] capabilities in %s", id, reg.Profile, reg.Layout.Config)
	}
	return fmt.Sprintf("add %q to [capabilities] enable in %s", id, reg.Layout.Config)
}

// runtimeVersionTimeout bounds `<runtime> --version`: a runtime that hangs
// must not hang doctor.
const runtimeVersionTimeout = 5 * time.Second

// Diagnose checks everything a server needs, without starting one.
func Diagnose(ctx context.Context, root string, environ []string, newRelay NewRelay) *Diagnosis {
	d := &Diagnosis{Root: root}
	if err := checkOwnFolders(root); err != nil {
		// Nothing else is checked: the checks write below .omni.
		d.ConfigErr = err
		d.Git = gitState(root)
		d.Server = "not checked"
		return d
	}
	d.Registry, d.ConfigErr = load(root, environ)
	sb := capability.Sandbox{Runtime: capability.DefaultRuntime}
	if d.Registry != nil {
		sb = d.Registry.Sandbox
		d.Files = []string{d.Registry.Layout.Config}
		for _, f := range []string{d.Registry.Layout.LocalConfig, ".omni/active-profile", ".omni/.env"} {
			if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(f))); err == nil {
				d.Files = append(d.Files, f)
			}
		}
	}
	d.Runtime = diagnoseRuntime(ctx, root, sb, environ)
	if d.Registry != nil {
		d.Wrapped = diagnoseServers(ctx, d.Registry, environ, newRelay)
	}
	if d.Registry != nil && d.Runtime.Err == nil {
		var refused []string
		d.Protections, d.RuntimePaths, d.Init, d.InitProblem, refused = diagnoseIsolation(ctx, d.Registry, d.Runtime.Path)
		for _, msg := range refused {
			d.Registry.Problems = append(d.Registry.Problems, capability.Problem{Path: d.Registry.Layout.Config, Message: msg})
		}
	}
	d.Git = gitState(root)
	switch st, err := ReadServerStatus(root); {
	case errors.Is(err, ErrNoServer):
		d.Server = "not running"
	case err != nil:
		d.Server = err.Error()
	case st.Running:
		d.Server = fmt.Sprintf("running (pid %d since %s)", st.PID, st.Since.Format(time.RFC3339))
	default:
		d.Server = fmt.Sprintf("not running (stale PID file names %d)", st.PID)
	}
	return d
}

// serverCheckTimeout bounds doctor's wait for the wrapped servers: npx may
// download a package first.
const serverCheckTimeout = 30 * time.Second

// diagnoseServers starts each wrapped server, lists its tools and stops it.
func diagnoseServers(ctx context.Context, reg *capability.Registry, environ []string, newRelay NewRelay) []WrappedServer {
	specs := mcpServers(reg)
	if len(specs) == 0 {
		return nil
	}
	r := Relay(noRelay{})
	if newRelay != nil {
		r = newRelay(environ, nil, nil)
	}
	defer r.Close()
	r.Sync(specs, true)
	ctx, cancel := context.WithTimeout(ctx, serverCheckTimeout)
	defer cancel()
	var ids []string
	for _, c := range reg.Capabilities {
		if c.MCP != nil {
			ids = append(ids, c.ID)
		}
	}
	r.Ensure(ctx, ids)
	return wrappedServers(r, reg)
}

func diagnoseRuntime(ctx context.Context, root string, sb capability.Sandbox, environ []string) RuntimeInfo {
	info := RuntimeInfo{Name: sb.Runtime}
	if sb.Command != nil {
		info.Name = strings.Join(sb.Command, " ")
	}
	path, err := execute.LookupRuntime(root, sb.Runtime, sb.Command, environ)
	if err != nil {
		info.Err = err
		if pkg := execute.RuntimePackage(sb.Runtime, sb.Command); pkg != "" && errors.Is(err, execute.ErrRuntimeNotFound) {
			info.Install = installAdvice(ctx, root, pkg, environ)
		}
		return info
	}
	info.Path = path
	if rel, err := filepath.Rel(root, path); err == nil && filepath.IsLocal(rel) {
		// Programs may replace what lies in the repository: doctor, which
		// runs outside the sandbox, does not start it (the isolation check
		// below does, inside).
		info.Version = "in the repository"
		return info
	}
	ctx, cancel := context.WithTimeout(ctx, runtimeVersionTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if err == nil {
		info.Version = strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
	}
	return info
}

// gitState names the branch and commit without computing the worktree's
// status, which costs seconds on big repositories.
func gitState(root string) string {
	repo, err := git.PlainOpenWithOptions(root, &git.PlainOpenOptions{DetectDotGit: true})
	if errors.Is(err, git.ErrRepositoryNotExists) {
		return "not a git repository: changes are still reported, against copies taken before each run"
	}
	if err != nil {
		return "unreadable git repository: " + err.Error()
	}
	head, err := repo.Head()
	if err != nil {
		return "git repository with no commits yet"
	}
	name := "detached HEAD"
	if head.Name().IsBranch() {
		name = "branch " + head.Name().Short()
	}
	return fmt.Sprintf("%s at %s", name, head.Hash().String()[:12])
}

// npmTimeout bounds `npm prefix -g`, a Node start and a read of npm's
// configuration.
const npmTimeout = 10 * time.Second

// installAdvice says how the user running doctor can install the npm
// package pkg of a missing runtime. `npm install -g` writes to npm's global
// folder, which a system Node keeps for root (EACCES for everyone else); an
// install in the repository, where omnidev also looks, needs only the
// repository.
func installAdvice(ctx context.Context, root, pkg string, environ []string) string {
	local := fmt.Sprintf("`npm install -D %s` in %s", pkg, root)
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "install Node.js with npm, then run " + local
	}
	ctx, cancel := context.WithTimeout(ctx, npmTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "prefix", "-g")
	cmd.Env = environ
	out, err := cmd.Output()
	prefix := strings.TrimSpace(string(out))
	if err != nil || !filepath.IsAbs(prefix) {
		return "run " + local + " (`npm prefix -g` failed: npm's global folder is unknown)"
	}
	global := fmt.Sprintf("`npm install -g %s`", pkg)
	if dir, ok := globalWritable(prefix); !ok {
		return fmt.Sprintf("run %s (%s would fail: %s is not writable by you)", local, global, dir)
	}
	return fmt.Sprintf("run %s (npm's global folder %s is writable by you), or %s", global, prefix, local)
}

// globalWritable reports whether this user can write where `npm install -g`
// writes under prefix (the packages and their commands), trying a file in
// each folder or, when it does not exist yet, in its nearest parent; else
// it returns the folder that is not writable.
func globalWritable(prefix string) (string, bool) {
	dirs := []string{filepath.Join(prefix, "lib", "node_modules"), filepath.Join(prefix, "bin")}
	if runtime.GOOS == "windows" {
		dirs = []string{filepath.Join(prefix, "node_modules"), prefix}
	}
	for _, dir := range dirs {
		for {
			if _, err := os.Stat(dir); err == nil || filepath.Dir(dir) == dir {
				break
			}
			dir = filepath.Dir(dir)
		}
		f, err := os.CreateTemp(dir, ".omnidev-doctor-*")
		if err != nil {
			return dir, false
		}
		f.Close()
		os.Remove(f.Name())
	}
	return "", true
}
