package capability

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// Load reads the configuration of the repository at root (the folder that
// holds omni/) and its enabled capabilities into a new Registry. environ is
// the process environment as os.Environ returns it; Load reads no other.
//
// Load returns an error only when the configuration itself is unusable:
// omni/config.toml missing or malformed, an invalid [sandbox] value, or an
// active profile that is not defined. Anything wrong with a capability or a
// file in it is a Problem in the Registry, and the rest still loads.
func Load(root string, environ []string) (*Registry, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("resolve repository root %q: %w", root, err)
	}
	fsys := os.DirFS(abs)
	cfg, problems, err := loadConfig(fsys, abs)
	if err != nil {
		return nil, err
	}
	profile, err := cfg.activeProfile(fsys)
	if err != nil {
		return nil, err
	}
	dotEnv, more := loadDotEnv(fsys)
	problems = append(problems, more...)

	sandbox := cfg.sandbox.resolve()
	src := envSources{
		process:     parseEnviron(environ),
		dotEnv:      dotEnv,
		config:      cfg.env,
		passthrough: sandbox.EnvPassthrough,
	}
	sandbox.resolvePaths(abs, src.process["HOME"])
	enabled := cfg.enabled(profile)
	loaded := loadCapabilities(abs, cfg.layout.CapabilitiesDir, enabled, src)
	problems = append(problems, loaded.problems...)

	reg := &Registry{
		Root:         abs,
		Layout:       cfg.layout,
		Profile:      profile,
		Profiles:     cfg.profileNames(),
		Capabilities: loaded.caps,
		Unavailable:  loaded.unavailable,
		NotEnabled:   notEnabled(fsys, cfg.layout.CapabilitiesDir, enabled),
		Sandbox:      sandbox,
		Env:          resolveEnv(src, loaded.caps, loaded.unavailable),
		Withheld:     withheldSecrets(src, loaded.caps),
		Problems:     problems,
		Warnings:     loaded.warnings,
	}
	if cfg.project != nil {
		reg.Project = *cfg.project
	}
	reg.KeepRuns = DefaultKeepRuns
	if cfg.keepRuns != nil {
		reg.KeepRuns = *cfg.keepRuns
	}
	return reg, nil
}

// loadDotEnv reads .omni/.env, which is optional and never fatal.
func loadDotEnv(fsys fs.FS) (map[string]string, []Problem) {
	data, ok, err := readOptional(fsys, dotEnvPath)
	if err != nil {
		return nil, []Problem{{Path: dotEnvPath, Message: readErrorMessage(err) + "; none of its variables are set"}}
	}
	if !ok {
		return nil, nil
	}
	return parseDotEnv(data)
}

// loaded is what loadCapabilities found.
type loaded struct {
	caps, unavailable []*Capability // sorted by ID
	problems          []Problem
	warnings          []Problem
}

// loadCapabilities loads the capabilities ids names from the folder dir
// (relative to root), concurrently, and returns those that loaded, sorted
// by ID, with the problems met on the way.
func loadCapabilities(root, dir string, ids []string, src envSources) loaded {
	ids = slices.Sorted(slices.Values(ids))
	type result struct {
		c                  *Capability
		problems, warnings []Problem
	}
	results := make([]result, len(ids))
	// Loading is mostly small file reads; more goroutines than processors
	// would only contend for them.
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, id := range ids {
		if err := ValidateID(id); err != nil {
			// An id is a folder name: an invalid one could point anywhere.
			results[i].problems = []Problem{{Message: "enable lists: " + err.Error() + "; fix or remove it"}}
			continue
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i].c, results[i].problems, results[i].warnings = loadCapability(root, dir, id)
		})
	}
	wg.Wait()

	// The checks across capabilities run in ID order, so that a tree always
	// yields the same registry and the same problems.
	var out loaded
	modules := make(map[string]string) // lower-cased module -> capability id
	for _, r := range results {
		out.problems = append(out.problems, r.problems...)
		out.warnings = append(out.warnings, r.warnings...)
		c := r.c
		if c == nil {
			continue
		}
		manifest := dir + "/" + c.ID + "/" + manifestFile
		// Modules become folders under node_modules, which on macOS and
		// Windows ignore case: "Tasks" and "tasks" would be one folder.
		key := strings.ToLower(c.Module)
		if other, dup := modules[key]; dup {
			out.problems = append(out.problems, Problem{
				Capability: c.ID,
				Path:       manifest,
				Message:    fmt.Sprintf("[exports] module %q is already used by capability %q; choose another module name", c.Module, other),
			})
			continue
		}
		modules[key] = c.ID
		// A capability missing a required variable stays visible, with
		// the reason, so that an agent that imports it learns what to set
		// rather than that the module does not exist. So does one whose
		// [mcp] names a variable set nowhere.
		if missing := src.missingRequired(c); len(missing) > 0 {
			c.Error = missingEnvMessage(missing)
		} else if err := resolveMCP(root, c, src); err != nil {
			c.Error = err.Error()
		}
		if c.Error != "" {
			out.problems = append(out.problems, Problem{Capability: c.ID, Path: manifest, Message: c.Error})
			out.unavailable = append(out.unavailable, c)
			continue
		}
		out.caps = append(out.caps, c)
	}
	return out
}

// notEnabled lists the folders of dir holding a capability.toml whose name
// is not in enabled.
func notEnabled(fsys fs.FS, dir string, enabled []string) []string {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil // a missing folder is reported for each enabled id
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() || slices.Contains(enabled, e.Name()) {
			continue
		}
		if _, err := fs.Stat(fsys, dir+"/"+e.Name()+"/"+manifestFile); err == nil {
			names = append(names, e.Name())
		}
	}
	return names
}

// missingEnvMessage names the missing variables, never their values.
func missingEnvMessage(names []string) string {
	if len(names) == 1 {
		return fmt.Sprintf("required environment variable %s is not set; set it in the environment or in %s", names[0], dotEnvPath)
	}
	return fmt.Sprintf("required environment variables %s are not set; set them in the environment or in %s", strings.Join(names, ", "), dotEnvPath)
}
