package capability

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Transports of an [mcp] server.
const (
	TransportStdio = "stdio"
	TransportHTTP  = "http"
)

// MCPServer is the [mcp] section of a capability that wraps an MCP server,
// with every ${NAME} expanded. Its values may hold secrets: never log it
// whole (LogValue keeps to the command or URL).
type MCPServer struct {
	// Transport is TransportStdio (Command set) or TransportHTTP (URL set).
	Transport string
	Command   string
	Args      []string
	// Env is the server's [mcp] env, added to PATH, HOME, LANG, TERM and
	// TMPDIR by whoever starts it.
	Env map[string]string
	// Dir is the absolute folder the server starts in: the repository root
	// unless [mcp] cwd says otherwise.
	Dir     string
	URL     string
	Headers map[string]string
	// Timeout bounds one call; zero means the run's timeout.
	Timeout time.Duration
}

// Target names the server for messages: its command or its URL without
// user info or query, never arguments or headers: any of those may carry
// a token.
func (m *MCPServer) Target() string {
	if m.Transport != TransportHTTP {
		return m.Command
	}
	u, err := url.Parse(m.URL)
	if err != nil {
		return "(an unparsable URL)"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}

// LogValue keeps args, env and headers, which may hold tokens, out of logs.
func (m *MCPServer) LogValue() slog.Value {
	return slog.GroupValue(slog.String("transport", m.Transport), slog.String("target", m.Target()))
}

// String is LogValue's text, for %v.
func (m *MCPServer) String() string { return m.Transport + " " + m.Target() }

// Equal reports whether two servers would be started the same way.
func (m *MCPServer) Equal(o *MCPServer) bool {
	if m == nil || o == nil {
		return m == o
	}
	return m.Transport == o.Transport && m.Command == o.Command && slices.Equal(m.Args, o.Args) &&
		maps.Equal(m.Env, o.Env) && m.Dir == o.Dir && m.URL == o.URL &&
		maps.Equal(m.Headers, o.Headers) && m.Timeout == o.Timeout
}

// Tool is one tool a wrapped server lists. The schemas are the server's JSON
// Schema objects, kept as JSON.
type Tool struct {
	Name         string
	Title        string
	Description  string
	InputSchema  []byte
	OutputSchema []byte // nil when the tool declares none
}

// rawMCP is the TOML shape of [mcp].
type rawMCP struct {
	Transport *string           `toml:"transport"`
	Command   *string           `toml:"command"`
	Args      []string          `toml:"args"`
	Env       map[string]string `toml:"env"`
	Cwd       *string           `toml:"cwd"`
	URL       *string           `toml:"url"`
	Headers   map[string]string `toml:"headers"`
	Timeout   *string           `toml:"timeout"`

	// Set by validate.
	transport string
	timeout   time.Duration
}

// validate checks the shape of [mcp], before any expansion.
func (r *rawMCP) validate() error {
	var errs []error
	var transport string
	switch {
	case r.Transport != nil:
		transport = *r.Transport
	case r.URL != nil:
		transport = TransportHTTP
	default:
		transport = TransportStdio
	}
	switch transport {
	case TransportStdio:
		if r.Command == nil || *r.Command == "" {
			errs = append(errs, errors.New(`[mcp] command is missing; set command = "..." for a stdio server, or url = "..." for an HTTP one`))
		}
		if r.URL != nil || r.Headers != nil {
			errs = append(errs, errors.New("[mcp] url and headers are for transport = \"http\"; remove them or the command"))
		}
	case TransportHTTP:
		if r.URL == nil || *r.URL == "" {
			errs = append(errs, errors.New(`[mcp] url is missing; set url = "https://..." for an HTTP server`))
		}
		if r.Command != nil || r.Args != nil || r.Env != nil || r.Cwd != nil {
			errs = append(errs, errors.New("[mcp] command, args, env and cwd are for transport = \"stdio\"; remove them or the url"))
		}
	case "sse":
		errs = append(errs, errors.New(`[mcp] transport "sse" is deprecated by MCP and not supported; use transport = "http" (Streamable HTTP), which servers offering SSE usually also serve`))
	default:
		errs = append(errs, fmt.Errorf(`[mcp] transport %q is unknown; use "stdio" or "http"`, transport))
	}
	for name := range r.Env {
		if !validEnvName(name) {
			errs = append(errs, fmt.Errorf("[mcp] env %q is not a valid variable name; use letters, digits and _", name))
		}
	}
	if r.Timeout != nil {
		d, perr := time.ParseDuration(*r.Timeout)
		switch {
		case perr != nil:
			errs = append(errs, fmt.Errorf("[mcp] timeout %q is not a duration; use a value like \"30s\"", *r.Timeout))
		case d <= 0:
			errs = append(errs, fmt.Errorf("[mcp] timeout %q must be positive", *r.Timeout))
		default:
			r.timeout = d
		}
	}
	r.transport = transport
	return errors.Join(errs...)
}

// resolve expands ${NAME} in args, env, url and headers with lookup and
// returns the server. An undefined name is an error naming it.
func (r *rawMCP) resolve(root string, lookup func(string) (string, bool)) (*MCPServer, error) {
	x := expander{lookup: lookup}
	m := &MCPServer{Transport: r.transport, Timeout: r.timeout, Dir: root}
	if r.Command != nil {
		m.Command = x.expand(*r.Command)
	}
	for _, a := range r.Args {
		m.Args = append(m.Args, x.expand(a))
	}
	if r.Env != nil {
		m.Env = make(map[string]string, len(r.Env))
		for k, v := range r.Env {
			m.Env[k] = x.expand(v)
		}
	}
	if r.URL != nil {
		m.URL = x.expand(*r.URL)
	}
	if r.Headers != nil {
		m.Headers = make(map[string]string, len(r.Headers))
		for k, v := range r.Headers {
			m.Headers[k] = x.expand(v)
		}
	}
	if r.Cwd != nil {
		cwd := filepath.FromSlash(*r.Cwd)
		if filepath.IsAbs(cwd) {
			m.Dir = filepath.Clean(cwd)
		} else {
			m.Dir = filepath.Join(root, cwd)
		}
	}
	if len(x.missing) > 0 {
		names := slices.Sorted(maps.Keys(x.missing))
		return nil, fmt.Errorf("[mcp] uses undefined variable%s %s; declare %s in [env] with a default, or set %s in the environment, config [env] or %s",
			plural(len(names)), strings.Join(names, ", "), pronoun(len(names)), pronoun(len(names)), dotEnvPath)
	}
	return m, nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func pronoun(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

// expander replaces ${NAME} and records the names it could not find. A "$"
// not followed by "{" is kept as it is.
type expander struct {
	lookup  func(string) (string, bool)
	missing map[string]bool
}

func (x *expander) expand(s string) string {
	if !strings.Contains(s, "${") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			break
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			break
		}
		name := s[i+2 : i+j]
		b.WriteString(s[:i])
		if v, ok := x.lookup(name); ok {
			b.WriteString(v)
		} else {
			if x.missing == nil {
				x.missing = make(map[string]bool)
			}
			x.missing[name] = true
		}
		s = s[i+j+1:]
	}
	b.WriteString(s)
	return b.String()
}

// RootVar names the repository root in [mcp] values, for servers that
// resolve a relative path against their own folder rather than their
// working folder. Any source that sets it wins.
const RootVar = "OMNIDEV_ROOT"

// resolveMCP expands c's [mcp] section with the capability's own defaults
// and the environment sources, in the precedence executed code's
// environment has.
func resolveMCP(root string, c *Capability, src envSources) error {
	if c.rawMCP == nil {
		return nil
	}
	defaults := make(map[string]string)
	for _, d := range c.EnvDecls {
		if d.HasDefault {
			defaults[d.Name] = d.Default
		}
	}
	lookup := func(name string) (string, bool) {
		if v, _, ok := src.lookup(name, true); ok {
			return v, true
		}
		if v, ok := defaults[name]; ok {
			return v, true
		}
		if name == RootVar {
			return root, true
		}
		return "", false
	}
	m, err := c.rawMCP.resolve(root, lookup)
	if err != nil {
		return err
	}
	c.MCP = m
	return nil
}

// MCPDefinition returns what `omnidev trust` shows and approves of a
// capability that wraps an MCP server: its [mcp] section and its [env]
// declarations as written, ${NAME} not expanded (so no secret value), as
// indented JSON with sorted keys. Any change to either is a new definition,
// which needs approval again: the command could change, and so could which
// variables it receives or which are kept secret from programs. "" when
// the capability wraps no server.
func (c *Capability) MCPDefinition() string {
	r := c.rawMCP
	if r == nil {
		return ""
	}
	type envDecl struct {
		Name     string `json:"name"`
		Default  string `json:"default,omitempty"`
		Required bool   `json:"required,omitempty"`
		Secret   bool   `json:"secret,omitempty"`
	}
	def := struct {
		Transport string            `json:"transport"`
		Command   *string           `json:"command,omitempty"`
		Args      []string          `json:"args,omitempty"`
		Env       map[string]string `json:"env,omitempty"`
		Cwd       *string           `json:"cwd,omitempty"`
		URL       *string           `json:"url,omitempty"`
		Headers   map[string]string `json:"headers,omitempty"`
		Timeout   *string           `json:"timeout,omitempty"`
		Declared  []envDecl         `json:"declared_env,omitempty"`
	}{r.transport, r.Command, r.Args, r.Env, r.Cwd, r.URL, r.Headers, r.Timeout, nil}
	for _, d := range c.EnvDecls {
		def.Declared = append(def.Declared, envDecl{d.Name, d.Default, d.Required, d.Secret})
	}
	data, err := json.MarshalIndent(def, "", "  ")
	if err != nil {
		return fmt.Sprintf("%+v", def)
	}
	return string(data)
}
