// Package engine is one repository's live state, shared by `omnidev serve`
// and the CLI's query and exec commands, so the tools and the CLI always give
// the same answers: the capability registry and run folder snapshot (swapped
// whole on reload), the query index, the executor (which serializes runs,
// across processes too), the PID and server-info files, the reload watcher
// and doctor.
//
// It must never import the MCP SDK: what speaks MCP adapts the engine
// (internal/server); the engine knows nothing of sessions or transports.
// The servers that capabilities wrap are reached through Relay, an
// interface it defines and its caller fills (internal/relay, composed in
// cmd/omnidev).
// It never logs a secret value, and never leaves a program it started
// running after Close.
package engine
