package execute

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/omnidev/omnidev/internal/runfolder"
)

// preset is a runtime omnidev knows how to start.
type preset struct {
	program string
	// args come before the runner path; they may name run folder files.
	args func(folder *runfolder.Folder) []string
	pkg  string // the npm package that installs it
}

// presetFor returns the [sandbox] runtime preset of that name. Measured
// choices:
//   - bun: `bun <runner>`, not `bun run <runner>`: `bun run` adds npm_*
//     variables and its own PATH to the environment, and the program must get
//     exactly the environment it was given.
//   - deno: Deno refuses TypeScript reached through node_modules (even with
//     a package.json "main"), so it gets the run folder's import map instead.
//   - node: tsx (Node cannot run TypeScript by itself before v23, and tsx
//     resolves node_modules/<module>/index.ts as Bun does).
func presetFor(name string) (preset, bool) {
	none := func(*runfolder.Folder) []string { return nil }
	switch name {
	case "bun":
		return preset{program: "bun", args: none, pkg: "bun"}, true
	case "deno":
		return preset{
			program: "deno",
			args: func(folder *runfolder.Folder) []string {
				return []string{"run", "-A", "--import-map=" + folder.ImportMapPath()}
			},
			pkg: "deno",
		}, true
	case "node":
		return preset{program: "tsx", args: none, pkg: "tsx"}, true
	}
	return preset{}, false
}

// LookupRuntime returns the absolute path of the program that runs code for
// a [sandbox] runtime: a preset name (bun, deno, node) when command is nil,
// else the explicit command's first word. It searches the PATH of environ
// (a list of "NAME=value"), as the program itself would, then the
// node_modules/.bin of the repository at root, where `npm install -D bun`
// puts it: an install that needs no write access outside the repository.
// An error wraps ErrRuntimeNotFound and says how to install the runtime;
// doctor prints it as is.
func LookupRuntime(root, runtime string, command []string, environ []string) (string, error) {
	program, install, err := runtimeProgram(runtime, command)
	if err != nil {
		return "", err
	}
	local := filepath.Join(root, "node_modules", ".bin")
	path, err := lookPath(program, append(pathList(environ), local))
	if err != nil {
		return "", fmt.Errorf("%w: %s is neither on PATH nor in %s; %s", ErrRuntimeNotFound, program, local, install)
	}
	return path, nil
}

// RuntimePackage returns the npm package that installs a preset runtime,
// "" for an explicit command or an unknown preset.
func RuntimePackage(runtime string, command []string) string {
	if p, ok := presetFor(runtime); ok && len(command) == 0 {
		return p.pkg
	}
	return ""
}

// runtimeProgram returns the program to look up and how to install it.
func runtimeProgram(runtime string, command []string) (program, install string, err error) {
	if len(command) > 0 {
		if command[0] == "" {
			return "", "", fmt.Errorf("%w: [sandbox] runtime command is empty; set runtime = \"bun\" or a command such as [\"bun\"] in omni/config.toml", ErrRuntimeNotFound)
		}
		return command[0], "install " + command[0] + " or change [sandbox] runtime in omni/config.toml", nil
	}
	p, ok := presetFor(runtime)
	if !ok {
		return "", "", fmt.Errorf("%w: unknown [sandbox] runtime %q; use \"bun\", \"deno\", \"node\" or an explicit command [\"cmd\", \"arg\"]", ErrRuntimeNotFound, runtime)
	}
	return p.program, fmt.Sprintf("install it in the repository with `npm install -D %s`, or for every repository with `npm install -g %s` where npm's global folder is writable by you (`omnidev doctor` says which works)", p.pkg, p.pkg), nil
}

// argv returns the program's arguments (after the program path) for a run:
// the preset's or the explicit command's, then the runner.
func argv(runtime string, command []string, folder *runfolder.Folder) []string {
	var args []string
	if len(command) > 0 {
		args = append(args, command[1:]...)
	} else {
		p, _ := presetFor(runtime) // Run looked the runtime up first
		args = append(args, p.args(folder)...)
	}
	return append(args, folder.RunnerPath())
}

// pathList returns the directories of the last PATH in environ.
func pathList(environ []string) []string {
	path := ""
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	return filepath.SplitList(path)
}

// lookPath finds program as exec.LookPath does, but on the given PATH
// rather than the server's. Relative PATH entries (".", "") are skipped: a
// runtime picked up from whatever directory the server started in is a
// trap, and exec.LookPath refuses those results as well.
func lookPath(program string, dirs []string) (string, error) {
	if strings.Contains(program, "/") {
		return executable(program)
	}
	for _, dir := range dirs {
		if !filepath.IsAbs(dir) {
			continue
		}
		if p, err := executable(filepath.Join(dir, program)); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: not found", program)
}

func executable(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return "", fmt.Errorf("%s: not an executable file", path)
	}
	return filepath.Abs(path)
}
