package capability

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// maxIDLen is the longest capability id ValidateID accepts.
const maxIDLen = 64

// BuiltinModule is the module omnidev itself gives every program (runs:
// list, show, undo). Its name is also the capability name the relay's
// channel routes to the server rather than to a wrapped server, so no
// capability may take it, as id or as module.
const BuiltinModule = "omnidev"

// ValidateID reports whether id is a valid capability id: a lowercase ASCII
// letter followed by up to 63 lowercase letters, digits or hyphens. Ids name
// folders and appear in source tags, so anything else is refused.
func ValidateID(id string) error {
	if id == "" {
		return fmt.Errorf("capability id is empty")
	}
	if len(id) > maxIDLen {
		return fmt.Errorf("capability id %q is longer than %d characters; shorten it", id, maxIDLen)
	}
	if id == BuiltinModule {
		return fmt.Errorf("capability id %q is reserved for omnidev's built-in module; rename the capability's folder and id", id)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		lower := 'a' <= c && c <= 'z'
		if lower || (i > 0 && ('0' <= c && c <= '9' || c == '-')) {
			continue
		}
		return fmt.Errorf("invalid capability id %q: use a lowercase letter followed by lowercase letters, digits or hyphens", id)
	}
	return nil
}

// ValidateModule reports whether name may be used as the import name of a
// capability module. Executed code imports capabilities by this name from a
// generated node_modules folder, so a name must neither shadow a runtime
// built-in (which would silently win or lose against it) nor be a path that
// leaves that folder.
func ValidateModule(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("module name is empty")
	case name == BuiltinModule:
		return fmt.Errorf("module name %q is reserved for omnidev's built-in module (runs); choose another [exports] module", name)
	case strings.HasPrefix(name, "node:"), strings.HasPrefix(name, "bun:"), isBuiltinModule(name):
		return fmt.Errorf("module name %q is reserved for a runtime built-in; choose another [exports] module", name)
	case strings.ContainsAny(name, `/\`), strings.Contains(name, ".."), strings.HasPrefix(name, "."):
		return fmt.Errorf("module name %q is a path; use a plain name without '/', '\\', '..' or a leading '.'", name)
	case strings.ContainsFunc(name, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }):
		return fmt.Errorf("module name %q contains whitespace or control characters; use a plain name", name)
	}
	return nil
}

// isBuiltinModule reports whether name is one of BuiltinModules.
func isBuiltinModule(name string) bool {
	return slices.Contains(BuiltinModules(), name)
}

// BuiltinModules returns the Node and Bun built-in modules that can be
// imported without a "node:" prefix, plus the few that are reserved for
// future unprefixed use (test, sqlite) and Bun's own "bun".
func BuiltinModules() []string {
	return []string{"assert", "async_hooks", "buffer", "child_process", "cluster", "console",
		"constants", "crypto", "dgram", "diagnostics_channel", "dns", "domain",
		"events", "fs", "http", "http2", "https", "inspector", "module", "net", "os",
		"path", "perf_hooks", "process", "punycode", "querystring", "readline",
		"repl", "stream", "string_decoder", "sys", "timers", "tls", "trace_events",
		"tty", "url", "util", "v8", "vm", "wasi", "worker_threads", "zlib",
		"test", "sqlite", "bun"}
}

// validEnvName reports whether name can be an environment variable name in
// "NAME=value" form: a letter or underscore, then letters, digits or underscores.
func validEnvName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		letter := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_'
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}
