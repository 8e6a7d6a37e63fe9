// Package server adapts an [engine.Engine] to MCP: the omni_query and
// omni_execute tools, the stdio and Streamable HTTP transports, and the
// lifecycle of `omnidev serve` (PID file, reloads, shutdown).
// On stdio, the transport is the package's own (see stdioTransport): a
// line filter answers a line that is not a message and goes on, where the
// SDK's transport ends the session on it, and each line is decoded once.
// Beside it, the transport answers the plain calls of omni_query itself,
// with the handler the SDK calls, and leaves every other message to the
// SDK (direct.go): the SDK's own work on a query cost as much as the
// search.
//
// It and the relay are the only packages that import the MCP SDK. It must
// never write anything but JSON-RPC to stdout while serving (logs go to the
// slog.Logger it is given), never log a secret value, and never leave a
// program started by omni_execute running after the server stops.
package server
