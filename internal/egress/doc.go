// Package egress is omnidev's egress proxy: the one way out of a run whose
// [sandbox] network is a list of hosts. The run's network namespace has a
// loopback and nothing else; a bridge in the sandbox's init listens there
// and hands each connection to this proxy through a Unix socket, and the
// program reaches the proxy through HTTP_PROXY and HTTPS_PROXY.
//
// The proxy speaks HTTP: CONNECT for TLS and any TCP stream, and
// absolute-form requests for plain HTTP. It lets through exactly the hosts
// on the list (exact names, "*." for subdomains, an optional port; 443 and
// 80 without one), resolves names itself (the sandbox has no resolver), and
// refuses loopback, private, link-local and metadata addresses unless the
// list names that exact host. A refusal is an HTTP 403 with a one-line body,
// and a line for the run's stderr; every host tried is recorded with its
// connections and bytes.
//
// The package must never connect anywhere the list does not allow, never
// resolve a name for the sandbox except to check and dial it, and never
// outlive the run it serves (Close ends every connection).
package egress
