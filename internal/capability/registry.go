package capability

import (
	"fmt"
	"log/slog"
	"time"
)

// Registry is one immutable snapshot of a repository's configuration and of
// its enabled capabilities. Nothing in it may be modified after Load returns:
// the server shares one Registry between concurrent requests and swaps in a
// new one on reload.
type Registry struct {
	// Root is the absolute path of the repository root (the folder holding omni/).
	Root string
	// Layout names the config file and the capabilities folder that were read.
	Layout Layout
	// Project is config.toml's project name ("" when unset).
	Project string
	// Profile is the active profile's name.
	Profile string
	// Profiles lists every defined profile name, sorted; it always holds "default".
	Profiles []string
	// Capabilities are the enabled capabilities that loaded without a fatal
	// problem, sorted by ID.
	Capabilities []*Capability
	// Sandbox is the [sandbox] section with defaults applied.
	Sandbox Sandbox
	// KeepRuns is [runs] keep: how many run records are kept for undo.
	KeepRuns int
	// Env is the resolved environment for executed code.
	Env Env
	// Withheld are the secrets of wrapped MCP servers: kept out of Env, and
	// listed here (with their values) only so that a run's output can be
	// redacted should a server hand one back to the program.
	Withheld Env
	// Unavailable are the enabled capabilities that loaded but cannot run,
	// sorted by ID: their Error says why (a required variable is unset).
	// They are listed to the agent with that error, and importing their
	// module fails with it; they are not among Capabilities.
	Unavailable []*Capability
	// NotEnabled lists the capability folders (with a capability.toml) that
	// no enable list of the active profile names, sorted.
	NotEnabled []string
	// Problems lists everything that was reported and left out or ignored
	// (broken capabilities, unknown keys, skills without a name, missing
	// folders...). A registry with problems is still usable.
	Problems []Problem
	// Warnings are worth fixing but lose nothing: a capability with code
	// and no types.d.ts, for instance.
	Warnings []Problem
}

// Capability is one loaded capability folder omni/capabilities/<id>/.
type Capability struct {
	ID          string
	Name        string
	Version     string
	Description string
	// Module is the import name executed code uses ([exports] module, else ID).
	Module string
	// Dir is the absolute path of the capability folder.
	Dir string
	// Entry is the module's entry file relative to Dir (package.json "main",
	// else index.ts / index.js when present); "" when the capability has no code.
	Entry string
	// Types is the content of types.d.ts ("" when absent).
	Types string
	// Docs holds definition.md first (Name "definition") when present, then
	// docs/**/*.md sorted by Name.
	Docs []Doc
	// Rules holds rules/*.md sorted by Name.
	Rules []Doc
	// Skills holds skills/<folder>/SKILL.md sorted by Name.
	Skills []Skill
	// EnvDecls are the [env] declarations of capability.toml, sorted by Name.
	EnvDecls []EnvDecl
	// Error is set on the capabilities of Registry.Unavailable: it says why
	// the capability cannot run and how to fix it.
	Error string
	// MCP is the [mcp] section, expanded: the capability wraps an MCP server
	// and its module is generated from the server's tools. nil otherwise.
	MCP *MCPServer
	// Tools are the wrapped server's tools, sorted by name, and ToolsError
	// why they are unknown. Load leaves both empty: whoever talks to the
	// server fills them in a copy of the capability (WithTools).
	Tools      []Tool
	ToolsError string

	rawMCP *rawMCP
}

// ToolsStarting is the ToolsError of a wrapped server that has not answered
// yet: a program that imports it waits for it.
const ToolsStarting = "starting: its tools are listed as soon as the server answers; a program that imports it waits for it"

// WithTools returns a copy of c with its wrapped server's tools, or the
// error that kept them from being listed.
func (c *Capability) WithTools(tools []Tool, toolsErr string) *Capability {
	cp := *c
	cp.Tools, cp.ToolsError = tools, toolsErr
	return &cp
}

// Definition returns the capability's main doc (definition.md).
func (c *Capability) Definition() (Doc, bool) {
	if len(c.Docs) > 0 && c.Docs[0].Name == DefinitionDoc {
		return c.Docs[0], true
	}
	return Doc{}, false
}

// DefinitionDoc is the Doc name given to definition.md.
const DefinitionDoc = "definition"

// Doc is a Markdown document: definition.md, docs/**/*.md or rules/*.md.
type Doc struct {
	// Name is the path under docs/ (or rules/) without ".md", with "/"
	// separators: docs/guide/setup.md -> "guide/setup"; definition.md -> "definition".
	Name string
	// Title is the first Markdown heading, else the file's base name.
	Title string
	// Body is the whole file content.
	Body string
	// Path is the file's path relative to Registry.Root, with "/" separators.
	Path string
}

// Skill is skills/<folder>/SKILL.md.
type Skill struct {
	// Name and Description come from the frontmatter; both are required.
	Name        string
	Description string
	// Body is the Markdown after the frontmatter.
	Body string
	// Path is the file's path relative to Registry.Root, with "/" separators.
	Path string
	// Title is the frontmatter's title, else the body's first heading, else Name.
	Title string
	// Text is the whole file, frontmatter included.
	Text string
	// Arguments are the frontmatter's `arguments` list; a body that uses
	// $ARGUMENTS without one has the single optional argument "arguments".
	Arguments []SkillArgument
}

// SkillArgument is one argument of a skill: `${Name}` in its body stands
// for the value given, `$ARGUMENTS` for all the values given.
type SkillArgument struct {
	Name        string
	Title       string
	Description string
	Required    bool
	// Values, when set, are the values a host offers as completions; other
	// values are still accepted.
	Values []string
}

// EnvDecl is one [env] entry of capability.toml.
type EnvDecl struct {
	Name       string
	Default    string
	HasDefault bool
	Required   bool
	Secret     bool
}

// Sandbox is the [sandbox] section of the config, defaults applied.
type Sandbox struct {
	// Runtime is the preset name ("bun", "deno", "node") when Command is nil.
	Runtime string
	// Command is an explicit argv from `runtime = ["cmd", "arg", ...]`; nil for a preset.
	Command        []string
	Timeout        time.Duration
	MaxOutputBytes int
	// Network is true for the whole network; false with NetworkHosts set,
	// only those hosts, through omnidev's egress proxy.
	Network        bool
	NetworkHosts   []string
	EnvPassthrough []string
	// Isolation is the mode of isolation: IsolationAuto (the default),
	// IsolationNamespaces, IsolationLandlock or IsolationNone.
	Isolation string
	// Filesystem is FilesystemIsolated, or FilesystemHost to leave the
	// host's filesystem as it is.
	Filesystem string
	// Writable and Readable are absolute host paths added to the view.
	Writable, Readable []string
	// MemoryBytes and Processes limit a run (processes counts threads).
	MemoryBytes int64
	Processes   int
	// TypeCheck is TypeCheckOff, TypeCheckWarn or TypeCheckError: whether
	// a program is type-checked before it runs, and whether errors stop it.
	TypeCheck string
}

// Defaults of the [sandbox] section. DefaultMaxOutputBytes keeps a whole
// omni_execute answer under about 10k tokens (docs/tools.md, "Answer
// budget"): 5 KiB a stream, head and tail, is about 3k tokens for both.
const (
	DefaultRuntime        = "bun"
	DefaultTimeout        = 30 * time.Second
	DefaultMaxOutputBytes = 5 << 10
	// DefaultTypeCheck: a check adds about 70 ms to a run (docs/tools.md),
	// little on an agent's turn of seconds, and reports every type error
	// at once where a run stops at the first; warn, not error, so that a
	// wrong or missing declaration never keeps a program from running.
	DefaultTypeCheck = TypeCheckWarn
)

// Values of [sandbox] typecheck.
const (
	TypeCheckOff   = "off"
	TypeCheckWarn  = "warn"
	TypeCheckError = "error"
)

// Upper bounds of the [sandbox] section, checked when the config loads: a
// value past them is a config error, never a timer or a buffer that size.
// A run longer than an hour is a job for something other than an agent's
// tool call, and a stream longer than 16 MiB is more than any agent reads.
const (
	MaxTimeout        = time.Hour
	MaxMaxOutputBytes = 16 << 20
)

// DefaultEnvPassthrough is the default [sandbox] env_passthrough list.
func DefaultEnvPassthrough() []string {
	return []string{"PATH", "HOME", "LANG", "TERM", "TMPDIR"}
}

// Env is the resolved environment for executed code, sorted by name.
type Env []EnvVar

// EnvVar is one variable of the resolved environment.
type EnvVar struct {
	Name  string
	Value string
	// Secret values are never logged or printed: see LogValue and String.
	Secret bool
	// Source says where the value came from: "process", ".omni/.env",
	// "config", or "default" (a capability's declared default).
	Source string
}

// Environ returns the variables as "NAME=value" pairs for exec.Cmd.Env.
func (e Env) Environ() []string {
	out := make([]string, len(e))
	for i, v := range e {
		out[i] = v.Name + "=" + v.Value
	}
	return out
}

// Lookup returns the variable with the given name.
func (e Env) Lookup(name string) (EnvVar, bool) {
	for _, v := range e {
		if v.Name == name {
			return v, true
		}
	}
	return EnvVar{}, false
}

// String renders the variable with secrets redacted.
func (v EnvVar) String() string {
	if v.Secret {
		return v.Name + "=[redacted]"
	}
	return v.Name + "=" + v.Value
}

// LogValue keeps secret values out of logs.
func (v EnvVar) LogValue() slog.Value {
	return slog.StringValue(v.String())
}

// Problem is something Load reported and left out.
type Problem struct {
	// Capability is the capability id or folder name; "" for config-level problems.
	Capability string
	// Path is the file or folder concerned, relative to Registry.Root.
	Path string
	// Message says what is wrong and what to do about it.
	Message string
}

func (p Problem) String() string {
	switch {
	case p.Capability != "" && p.Path != "":
		return fmt.Sprintf("capability %s: %s: %s", p.Capability, p.Path, p.Message)
	case p.Capability != "":
		return fmt.Sprintf("capability %s: %s", p.Capability, p.Message)
	case p.Path != "":
		return fmt.Sprintf("%s: %s", p.Path, p.Message)
	}
	return p.Message
}

// DefaultKeepRuns is how many run records are kept when [runs] keep is
// unset; maxKeepRuns bounds it, each run being a packfile in .omni/runs.
const (
	DefaultKeepRuns = 100
	maxKeepRuns     = 100_000
)
