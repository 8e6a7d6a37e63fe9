// Package server adapts an [engine.Engine] to MCP: the omni_query and
// omni_execute tools, the stdio and Streamable HTTP transports, and the
// lifecycle of `omnidev serve` (PID file, reloads, shutdown).
// Every message goes through the SDK's dispatch and middleware, on both
// transports. On stdio, one layer of its own stands in front of the SDK's
// transport, a line filter for go-sdk issue #1209 (see stdioTransport).
//
// It and the relay are the only packages that import the MCP SDK. It must
// never write anything but JSON-RPC to stdout while serving (logs go to the
// slog.Logger it is given), never log a secret value, and never leave a
// program started by omni_execute running after the server stops.
package server
