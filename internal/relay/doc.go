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
// sessions. Over stdio, a tool call goes past the SDK's client: lineConn
// writes it and hands the server's result to the program as it came,
// where the SDK would decode it and the relay encode it again (and drop
// what the SDK does not know). Everything else (initialization, listing,
// notifications, HTTP servers) is the SDK's.
//
// It must never import internal/server or internal/engine: the engine uses
// it, and the MCP server side is a different concern.
package relay
