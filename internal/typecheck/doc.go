// Package typecheck checks a program for omni_execute against the
// capabilities' type definitions with the TypeScript compiler (tsc), before
// it runs, and reports the errors at the lines of the program as written.
//
// The compiler runs on the host, so the package treats the repository as
// hostile: it runs tsc only from the server's PATH (never from the
// repository's node_modules/.bin, which a run can write), on a project it
// writes itself (its own tsconfig.json, which extends nothing, with
// types: [] so that no @types package is pulled in), with a scrubbed
// environment (no NODE_OPTIONS), in its own process group, within a
// timeout. tsc reads repository files that the program imports; it never
// executes them.
//
// It must never run the program or call a wrapped tool: a check that
// fails in "error" mode is meant to leave the repository untouched.
package typecheck
