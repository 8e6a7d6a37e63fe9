// Package tsgen writes the module of a capability that wraps an MCP server:
// the JavaScript a program imports (one function per tool, plus call and
// tools) and its TypeScript `declare module` block, generated from the
// tools' JSON Schemas.
//
// Function names follow one stable rule (see Identifiers), so that a
// program written against a server keeps working while the server adds
// tools.
//
// Declarations must stay valid TypeScript and readable whatever JSON Schema
// a server emits: a part that cannot be typed becomes unknown without
// loosening the rest, a recursive $ref becomes a named type, and inlined
// $refs fall back to named types before the output can grow faster than
// the schema. TestDeclarationsTypeCheck runs tsc --strict over them.
//
// It knows nothing of MCP sessions: the module reaches omnidev
// through the relay's socket, named by environment variables.
package tsgen
