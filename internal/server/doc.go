// Package server adapts an [engine.Engine] to MCP: the omni_query and
// omni_execute tools, the stdio and Streamable HTTP transports, and the
// lifecycle of `omnidev serve` (PID file, reload notifications, shutdown).
//
// It and the relay are the only packages that import the MCP SDK. It must
// never write anything but JSON-RPC to stdout while serving (logs go to the
// slog.Logger it is given), never log a secret value, and never leave a
// program started by omni_execute running after the server stops.
package server
