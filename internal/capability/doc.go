// Package capability turns a repository's files on disk into a Registry: one
// immutable snapshot of its configuration (omni/config.toml, or OmniDev's
// omni.toml or .omni/config.toml: see Layout; merged with
// .omni/config.local.toml, the active profile and .omni/.env) and of its
// enabled capabilities (omni/capabilities/<id>/: manifest, entry, types,
// docs, rules and skills). The query index, the sandbox and the server are
// all built from a Registry; a reload builds a new one.
//
// Every key of a TOML file that the decoding structs do not name is a
// Problem with its file and line, so a typo is never silently ignored.
//
// Only an unusable configuration is an error. A broken capability, skill or
// doc is recorded as a Problem and left out, so one mistake never hides the
// rest.
//
// SKILL.md frontmatter is YAML, parsed by github.com/goccy/go-yaml, chosen for
// its errors: the line and column of the token at fault. The fields are read
// from its syntax tree, not through its decoder, which reads version: 1.10
// (even tagged !!str) into a string field as "1.1" and expands aliases
// without a bound. Its parse time grows with the square of the nesting depth
// (about 240 ms for the deepest 16 KiB frontmatter, BenchmarkParseFrontmatter),
// which is what sets maxFrontmatterBytes.
//
// What the package must never do:
//   - modify a Registry after Load has returned it: it is shared by
//     concurrent requests without locks;
//   - put a secret value in a log line, an error or a Problem: messages name
//     variables, never their values;
//   - read the process environment itself: the caller passes it to Load, so
//     that tests and reloads control exactly what is visible;
//   - panic, whatever the bytes on disk: files are size-capped, symlinks that
//     leave a capability folder (or lead a capability folder out of the
//     repository) are not followed, and parsers are fuzzed;
//   - accept a [sandbox] value past its bound (MaxTimeout, MaxMaxOutputBytes):
//     callers size timers and buffers from these values.
package capability
