package capability

import (
	"slices"
	"strings"
)

// Sources of a resolved variable, in EnvVar.Source.
const (
	sourceProcess = "process"
	sourceDotEnv  = dotEnvPath
	sourceConfig  = "config"
	sourceDefault = "default"
)

// envSources are the places a variable's value may come from.
type envSources struct {
	process     map[string]string // the server's environment
	dotEnv      map[string]string // .omni/.env
	config      map[string]string // [env] of the merged config
	passthrough []string          // [sandbox] env_passthrough
}

// parseEnviron turns os.Environ-style pairs into a map. The first of
// duplicate names wins, as with os.Getenv.
func parseEnviron(environ []string) map[string]string {
	m := make(map[string]string, len(environ))
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if _, dup := m[name]; ok && name != "" && !dup {
			m[name] = value
		}
	}
	return m
}

// lookup returns a variable's value from the highest source that has it,
// capabilities' defaults aside. The process environment is consulted only
// for names the repository asks for (passthrough, .omni/.env, declared by a
// capability): a name that only config [env] sets keeps its config value, so
// that a stray variable of the server's cannot override the project's setting.
func (s envSources) lookup(name string, declared bool) (value, source string, ok bool) {
	_, inDotEnv := s.dotEnv[name]
	if declared || inDotEnv || slices.Contains(s.passthrough, name) {
		if v, ok := s.process[name]; ok {
			return v, sourceProcess, true
		}
	}
	if v, ok := s.dotEnv[name]; ok {
		return v, sourceDotEnv, true
	}
	if v, ok := s.config[name]; ok {
		return v, sourceConfig, true
	}
	return "", "", false
}

// withheldSecrets returns the values of the secrets that capabilities with
// [mcp] declare, from the same sources as their expansion.
func withheldSecrets(s envSources, caps []*Capability) Env {
	var out Env
	for _, c := range caps {
		if c.rawMCP == nil {
			continue
		}
		for _, d := range c.EnvDecls {
			if !d.Secret {
				continue
			}
			v, source, ok := s.lookup(d.Name, true)
			if !ok && d.HasDefault {
				v, source, ok = d.Default, sourceDefault, true
			}
			if ok && v != "" {
				out = append(out, EnvVar{Name: d.Name, Value: v, Secret: true, Source: source})
			}
		}
	}
	return out
}

// missingRequired returns the names c requires that have no non-empty value
// in any source, its own defaults included. An empty token is as useless as
// none, so it counts as missing.
func (s envSources) missingRequired(c *Capability) []string {
	var missing []string
	for _, d := range c.EnvDecls {
		if !d.Required {
			continue
		}
		v, _, ok := s.lookup(d.Name, true)
		if !ok {
			v = d.Default
		}
		if v == "" {
			missing = append(missing, d.Name)
		}
	}
	return missing
}

// resolveEnv builds the environment of executed code: the passthrough names
// the process has, config [env], .omni/.env, and the names the loaded
// capabilities declare. Nothing else of the process environment appears.
//
// A variable is secret when a capability declares it secret or when
// .omni/.env names it: that file is where people put tokens, and marking a
// variable secret only keeps it out of logs. A variable that a capability
// with [mcp] declares secret is left out altogether, wherever its value
// comes from: it is for that server's connection, not for the program.
func resolveEnv(s envSources, caps, unavailable []*Capability) Env {
	type decl struct {
		secret     bool
		hasDefault bool
		def        string
	}
	declared := make(map[string]decl)
	// A secret of a wrapped server's is for its connection only, even
	// while the capability cannot run.
	withheld := make(map[string]bool)
	for _, c := range unavailable {
		for _, d := range c.EnvDecls {
			if d.Secret && c.rawMCP != nil {
				withheld[d.Name] = true
			}
		}
	}
	for _, c := range caps { // in ID order: the first capability's default wins
		for _, d := range c.EnvDecls {
			if d.Secret && c.rawMCP != nil {
				withheld[d.Name] = true
			}
			cur := declared[d.Name]
			cur.secret = cur.secret || d.Secret
			if d.HasDefault && !cur.hasDefault {
				cur.hasDefault, cur.def = true, d.Default
			}
			declared[d.Name] = cur
		}
	}
	names := make(map[string]bool)
	for _, name := range s.passthrough {
		if _, ok := s.process[name]; ok {
			names[name] = true
		}
	}
	for _, m := range []map[string]string{s.config, s.dotEnv} {
		for name := range m {
			names[name] = true
		}
	}
	for name := range declared {
		names[name] = true
	}

	env := make(Env, 0, len(names))
	for name := range withheld {
		delete(names, name)
	}
	for name := range names {
		d, isDeclared := declared[name]
		value, source, ok := s.lookup(name, isDeclared)
		if !ok && d.hasDefault {
			value, source, ok = d.def, sourceDefault, true
		}
		if !ok {
			continue // declared, optional, and set nowhere
		}
		_, inDotEnv := s.dotEnv[name]
		env = append(env, EnvVar{Name: name, Value: value, Secret: d.secret || inDotEnv, Source: source})
	}
	slices.SortFunc(env, func(a, b EnvVar) int { return strings.Compare(a.Name, b.Name) })
	return env
}
