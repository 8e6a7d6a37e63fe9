// Package relay is omnidev's MCP client side: it holds a session to each
// MCP server that a capability wraps ([mcp] in capability.toml), lists
// their tools, and lets running programs call them through a Unix socket
// that omnidev serves, so that programs never connect to the servers (nor
// see their secrets) themselves.
//
// A stdio server is started with exactly PATH, HOME, LANG, TERM, TMPDIR and
// its [mcp] env, in its own process group that Close kills, and (on Linux)
// with a parent-death signal, so that no server outlives omnidev. A server
// that exits is started again on the next call, after a backoff when it
// keeps crashing.
//
// The relay asks servers for MCP 2025-11-25, the last protocol with
// sessions, and speaks to them through the SDK's client alone, over its
// own transports: a program gets a result as the SDK decoded it, the same
// shape whether the server speaks stdio or HTTP.
//
// It must never import internal/server or internal/engine: the engine uses
// it, and the MCP server side is a different concern.
package relay
