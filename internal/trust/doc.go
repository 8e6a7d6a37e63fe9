// Package trust keeps the user's approvals of the MCP servers a repository's
// capabilities wrap. A wrapped server's command runs on the host, outside
// the sandbox, with the user's rights: a repository cloned from elsewhere
// must not start programs by itself, so a definition runs only once the
// user approved that exact definition (`omnidev trust`), as Claude Code asks
// before it starts a project's .mcp.json servers and direnv before an
// .envrc runs.
//
// Approvals live outside every repository, in the user's config folder,
// keyed by the repository's path, the capability and a hash of its
// definition: a changed definition needs approval again. The package must
// never store a definition's values (they may hold tokens), and never read
// anything inside a repository.
package trust
