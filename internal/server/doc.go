// Package server is omnidev's MCP server: the omni_query and omni_execute
// tools, the stdio transport, reload orchestration and the PID-file lifecycle.
//
// It is the only package that imports the MCP SDK. Everything it serves comes
// from an [Engine], which the CLI's query and exec commands use directly, so
// the tools and the CLI always give the same answers.
//
// It must never write anything but JSON-RPC to stdout while serving (logs go
// to the slog.Logger it is given), never log a secret value, and never leave a
// program started by omni_execute running after the server stops.
package server
