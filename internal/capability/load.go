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
	caps, more := loadCapabilities(abs, cfg.enabled(profile), src)
	problems = append(problems, more...)

	reg := &Registry{
		Root:         abs,
		Profile:      profile,
		Profiles:     cfg.profileNames(),
		Capabilities: caps,
		Sandbox:      sandbox,
		Env:          resolveEnv(src, caps),
		Problems:     problems,
	}
	if cfg.project != nil {
		reg.Project = *cfg.project
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

// loadCapabilities loads the capabilities ids names, concurrently, and
// returns those that loaded, sorted by ID, with the problems met on the way.
func loadCapabilities(root string, ids []string, src envSources) ([]*Capability, []Problem) {
	ids = slices.Sorted(slices.Values(ids))
	type result struct {
		c        *Capability
		problems []Problem
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
			results[i].c, results[i].problems = loadCapability(root, id)
		})
	}
	wg.Wait()

	// The checks across capabilities run in ID order, so that a tree always
	// yields the same registry and the same problems.
	var caps []*Capability
	var problems []Problem
	modules := make(map[string]string) // lower-cased module -> capability id
	for _, r := range results {
		problems = append(problems, r.problems...)
		c := r.c
		if c == nil {
			continue
		}
		manifest := capabilitiesDir + "/" + c.ID + "/" + manifestFile
		if missing := src.missingRequired(c); len(missing) > 0 {
			problems = append(problems, Problem{Capability: c.ID, Path: manifest, Message: missingEnvMessage(missing)})
			continue
		}
		// Modules become folders under node_modules, which on macOS and
		// Windows ignore case: "Tasks" and "tasks" would be one folder.
		key := strings.ToLower(c.Module)
		if other, dup := modules[key]; dup {
			problems = append(problems, Problem{
				Capability: c.ID,
				Path:       manifest,
				Message:    fmt.Sprintf("[exports] module %q is already used by capability %q; choose another module name", c.Module, other),
			})
			continue
		}
		if err := resolveMCP(root, c, src); err != nil {
			problems = append(problems, Problem{Capability: c.ID, Path: manifest, Message: err.Error()})
			continue
		}
		modules[key] = c.ID
		caps = append(caps, c)
	}
	return caps, problems
}

// missingEnvMessage names the missing variables, never their values.
func missingEnvMessage(names []string) string {
	if len(names) == 1 {
		return fmt.Sprintf("required environment variable %s is not set; set it in the environment or in %s", names[0], dotEnvPath)
	}
	return fmt.Sprintf("required environment variables %s are not set; set them in the environment or in %s", strings.Join(names, ", "), dotEnvPath)
}
