package capability

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// maxCapabilityBytes bounds the text read from one capability folder, on top
// of maxFileBytes per file: thousands of files under the per-file cap would
// otherwise still add up. A real capability holds well under a megabyte.
const maxCapabilityBytes = 16 << 20

var errBudget = fmt.Errorf("the capability folder holds more than %d MiB of text; remaining files are skipped", maxCapabilityBytes>>20)

// manifestFile is the file that makes a folder a capability.
const manifestFile = "capability.toml"

// entryCandidates are the module entries looked for, in order, when
// package.json names none.
var entryCandidates = [...]string{"index.ts", "index.js", "index.mts", "index.mjs"}

// rawManifest is the TOML shape of capability.toml.
type rawManifest struct {
	Capability struct {
		ID          string `toml:"id"`
		Name        string `toml:"name"`
		Version     string `toml:"version"`
		Description string `toml:"description"`
	} `toml:"capability"`
	Exports struct {
		Module *string `toml:"module"`
	} `toml:"exports"`
	// Env values are a default string or a table {default, required, secret}.
	Env map[string]any `toml:"env"`
	MCP *rawMCP        `toml:"mcp"`
	// MCPs is the named form [mcps.<name>], refused until it is supported.
	MCPs map[string]any `toml:"mcps"`
}

// capLoader loads one capability folder. Every read goes through an os.Root
// opened on the folder, so a symlink that leads out of it is not followed.
type capLoader struct {
	id       string
	rel      string // the folder relative to the repository root, with "/"
	root     *os.Root
	fsys     fs.FS // root.FS()
	subdirs  map[string]*os.Root
	budget   int // bytes left to read; see maxCapabilityBytes
	problems []Problem
	warnings []Problem
}

// loadCapability loads <dir>/<id> (dir relative to root, such as
// omni/capabilities). It returns nil when the capability must be left out;
// the problems say why, and also list the files that were skipped from a
// capability that loaded, and what in it is ignored.
func loadCapability(root, dir, id string) (*Capability, []Problem, []Problem) {
	l := &capLoader{id: id, rel: dir + "/" + id, budget: maxCapabilityBytes}
	c := l.load(root)
	return c, l.problems, l.warnings
}

func (l *capLoader) load(root string) *Capability {
	id := l.id
	dir := filepath.Join(root, filepath.FromSlash(l.rel))
	r, err := openInside(root, l.rel)
	if err != nil {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			l.problem("", fmt.Sprintf("folder %s not found; create it or remove %q from the enable lists", l.rel, id))
		case throughSymlink(os.DirFS(root), l.rel):
			l.problem("", "the folder is a symlink that leads outside the repository or cannot be resolved; it is not followed: "+
				"copy the capability into the repository or link to a folder inside it")
		default:
			l.problem("", readErrorMessage(err))
		}
		return nil
	}
	l.root, l.fsys = r, r.FS()
	defer l.close()

	c := l.manifest()
	if c == nil {
		return nil
	}
	c.Dir = dir
	var ok bool
	if c.Entry, ok = l.entry(); !ok {
		return nil
	}
	if c.rawMCP != nil && c.Entry != "" {
		l.problem(c.Entry, "a capability with [mcp] has a generated module; remove "+c.Entry+" or the [mcp] section")
		return nil
	}
	c.Types = l.types()
	if c.Entry != "" && c.Types == "" {
		l.warnings = append(l.warnings, Problem{Capability: id, Path: l.rel + "/types.d.ts",
			Message: fmt.Sprintf("not found: agents see no type definitions for module %q; declare its exports there", c.Module)})
	}
	l.docsInCode(c.Entry)
	c.Docs = l.docs()
	c.Rules = l.rules()
	c.Skills = l.skills()
	return c
}

// openInside opens an os.Root on the folder rel of the repository at root,
// resolving rel within the repository: symlinks that stay inside it are
// followed, one that leads out fails as a doc's symlink does.
func openInside(root, rel string) (*os.Root, error) {
	repo, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer repo.Close()
	return repo.OpenRoot(filepath.FromSlash(rel))
}

// problem records a problem with the file rel (relative to the capability
// folder; "" for the folder itself).
func (l *capLoader) problem(rel, msg string) {
	p := l.rel
	if rel != "" {
		p += "/" + rel
	}
	l.problems = append(l.problems, Problem{Capability: l.id, Path: p, Message: msg})
}

// fileProblem records a failed read of rel. Once the byte budget is spent
// it says so once, not once per skipped file.
func (l *capLoader) fileProblem(rel string, err error) {
	if errors.Is(err, errBudget) {
		if l.budget < 0 {
			return
		}
		l.budget = -1
		l.problem("", errBudget.Error())
		return
	}
	l.problem(rel, readErrorMessage(err))
}

// read reads rel within the folder and charges it to the budget.
func (l *capLoader) read(rel string) ([]byte, error) {
	if l.budget <= 0 {
		return nil, errBudget
	}
	fsys, err := l.subdir(path.Dir(rel))
	var data []byte
	if err == nil {
		data, err = readFile(fsys, path.Base(rel))
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		// A symlink may leave its subfolder and still stay in the capability
		// folder: only the capability's root can tell.
		data, err = readFile(l.fsys, rel)
	}
	if len(data) > l.budget {
		return nil, errBudget
	}
	l.budget -= len(data)
	return data, err
}

// subdir returns the FS of the folder dir, opening an os.Root on it once.
// An os.Root resolves a path one component at a time, so reading each file
// through the root of its own folder takes one open per file instead of one
// per path component: a third of the load time on large trees.
func (l *capLoader) subdir(dir string) (fs.FS, error) {
	if dir == "." {
		return l.fsys, nil
	}
	if r, ok := l.subdirs[dir]; ok {
		return r.FS(), nil
	}
	r, err := l.root.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	if l.subdirs == nil {
		l.subdirs = make(map[string]*os.Root)
	}
	l.subdirs[dir] = r
	return r.FS(), nil
}

func (l *capLoader) close() {
	for _, r := range l.subdirs {
		r.Close()
	}
	l.root.Close()
}

// manifest reads capability.toml; nil means the capability is left out.
func (l *capLoader) manifest() *Capability {
	data, err := l.read(manifestFile)
	if errors.Is(err, fs.ErrNotExist) {
		l.problem(manifestFile, fmt.Sprintf("not found; create it with [capability] id = %q", l.id))
		return nil
	}
	if err != nil {
		l.fileProblem(manifestFile, err)
		return nil
	}
	c, err := parseManifest(data, l.id)
	if err != nil {
		l.problem(manifestFile, err.Error())
		return nil
	}
	// Decoded again for its metadata, so that parseManifest keeps its
	// signature; a capability.toml is a few hundred bytes.
	var raw rawManifest
	if md, err := toml.Decode(string(data), &raw); err == nil {
		l.problems = append(l.problems, unknownKeys(md, data, l.rel+"/"+manifestFile, l.id, knownEnvKey)...)
	}
	return c
}

// parseManifest decodes the capability.toml of the folder named folder. An
// error says why the capability must be left out.
func parseManifest(data []byte, folder string) (*Capability, error) {
	var raw rawManifest
	if _, err := toml.Decode(string(data), &raw); err != nil {
		line, col, msg := tomlError(err, data)
		if line > 0 {
			return nil, fmt.Errorf("invalid TOML at line %d, column %d: %s", line, col, msg)
		}
		return nil, errors.New(msg)
	}
	id := raw.Capability.ID
	if id == "" {
		return nil, fmt.Errorf("[capability] id is missing; add id = %q", folder)
	}
	if err := ValidateID(id); err != nil {
		return nil, err
	}
	if id != folder {
		return nil, fmt.Errorf("[capability] id %q does not match its folder %q; make them the same", id, folder)
	}
	module := id
	if raw.Exports.Module != nil {
		module = *raw.Exports.Module
	}
	if err := ValidateModule(module); err != nil {
		return nil, fmt.Errorf("[exports] %w", err)
	}
	decls, err := envDecls(raw.Env)
	if err != nil {
		return nil, err
	}
	if raw.MCPs != nil {
		return nil, errors.New("[mcps.<name>] (several servers in one capability) is not supported yet; use one [mcp] section per capability")
	}
	if raw.MCP != nil {
		if err := raw.MCP.validate(); err != nil {
			return nil, err
		}
	}
	return &Capability{
		ID:          id,
		Name:        raw.Capability.Name,
		Version:     raw.Capability.Version,
		Description: raw.Capability.Description,
		Module:      module,
		EnvDecls:    decls,
		rawMCP:      raw.MCP,
	}, nil
}

// knownEnvKey reports the keys of an [env] entry's table that envDecl reads.
func knownEnvKey(k toml.Key) bool {
	if len(k) != 3 || k[0] != "env" {
		return false
	}
	switch k[2] {
	case "default", "required", "secret":
		return true
	}
	return false
}

// envDecls reads the [env] table of capability.toml, sorted by name.
func envDecls(raw map[string]any) ([]EnvDecl, error) {
	var errs []error
	decls := make([]EnvDecl, 0, len(raw))
	for _, name := range slices.Sorted(maps.Keys(raw)) {
		d, err := envDecl(name, raw[name])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		decls = append(decls, d)
	}
	return decls, errors.Join(errs...)
}

func envDecl(name string, v any) (EnvDecl, error) {
	d := EnvDecl{Name: name}
	if !validEnvName(name) {
		return d, fmt.Errorf("[env] %q is not a valid variable name; use letters, digits and _", name)
	}
	if s, ok := scalarString(v); ok {
		d.Default, d.HasDefault = s, true
		return d, nil
	}
	table, ok := v.(map[string]any)
	if !ok {
		return d, fmt.Errorf("[env] %s must be a default value or a table such as { default = \"...\", required = true, secret = true }", name)
	}
	if def, set := table["default"]; set {
		if d.Default, d.HasDefault = scalarString(def); !d.HasDefault {
			return d, fmt.Errorf("[env] %s: default must be a string", name)
		}
	}
	flags := []struct {
		key string
		dst *bool
	}{{"required", &d.Required}, {"secret", &d.Secret}}
	for _, f := range flags {
		if b, set := table[f.key]; set {
			if *f.dst, ok = b.(bool); !ok {
				return d, fmt.Errorf("[env] %s: %s must be true or false", name, f.key)
			}
		}
	}
	return d, nil
}

// entry finds the module entry: package.json "main", else the first of
// entryCandidates that exists. ok is false when the capability must be left
// out because package.json is broken: the runtime could not load it either.
func (l *capLoader) entry() (entry string, ok bool) {
	data, err := l.read("package.json")
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		l.fileProblem("package.json", err)
		return "", false
	default:
		var pkg struct {
			Main string `json:"main"`
		}
		if err := json.Unmarshal(data, &pkg); err != nil {
			l.problem("package.json", fmt.Sprintf("invalid JSON: %v; fix it or remove the file", err))
			return "", false
		}
		if pkg.Main != "" {
			main := path.Clean(pkg.Main)
			if !fs.ValidPath(main) || main == "." || strings.Contains(main, `\`) {
				l.problem("package.json", fmt.Sprintf("main %q must be a path inside the capability folder", pkg.Main))
				return "", false
			}
			return main, true
		}
	}
	for _, name := range entryCandidates {
		if info, err := fs.Stat(l.fsys, name); err == nil && info.Mode().IsRegular() {
			return name, true
		}
	}
	return "", true
}

// types reads types.d.ts; a file that cannot be read is reported and left out.
func (l *capLoader) types() string {
	data, err := l.read("types.d.ts")
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			l.fileProblem("types.d.ts", err)
		}
		return ""
	}
	return string(data)
}
