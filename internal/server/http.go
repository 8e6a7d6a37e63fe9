package server

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/omnidev/omnidev/internal/engine"
)

// HTTP transport limits and timeouts.
const (
	// httpPath is where the Streamable HTTP endpoint is served.
	httpPath = "/mcp"
	// maxRequestBytes admits a 1 MiB program (execute.MaxCodeBytes) even
	// when JSON escaping inflates it several times, and refuses anything
	// that could only be an attack or a mistake.
	maxRequestBytes = 8 << 20
	// sessionTimeout closes sessions idle this long, so abandoned clients do
	// not pin memory forever; MCP hosts reconnect transparently.
	sessionTimeout = 30 * time.Minute
	// shutdownGrace bounds a graceful stop: in-flight requests finish or are
	// cancelled within it.
	shutdownGrace = 2 * time.Second
	// readHeaderTimeout keeps slow-loris clients from holding connections.
	readHeaderTimeout = 10 * time.Second
)

// ErrPublicWithoutToken refuses to expose the server beyond this machine
// without authentication.
var ErrPublicWithoutToken = errors.New("refusing to serve on a non-loopback address without a token")

// listenHTTP checks addr and listens on it. A non-loopback address (which
// includes an empty host: every interface) needs a token.
func listenHTTP(addr, token string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--http %q: want HOST:PORT, such as 127.0.0.1:7777 (port 0 picks a free one): %w", addr, err)
	}
	if !isLoopback(host) && token == "" {
		return nil, fmt.Errorf("--http %s: %w; pass --token (or set OMNIDEV_TOKEN), or use 127.0.0.1", addr, ErrPublicWithoutToken)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return ln, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// httpHandler serves the MCP server at /mcp behind the bearer-token check
// (when a token is set) and cross-origin protection; the SDK adds its
// DNS-rebinding protection for loopback connections and the body limit.
func httpHandler(srv *mcp.Server, requests *httpRequests, token string, logger *slog.Logger) http.Handler {
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		SessionTimeout:               sessionTimeout,
		MaxRequestBodyBytes:          maxRequestBytes,
		Logger:                       sdkLogger(logger),
		PropagateRequestCancellation: true,
	})
	var h http.Handler = http.NewCrossOriginProtection().Handler(requests.middleware(mcpHandler))
	if token != "" {
		h = requireToken(token, h)
	}
	mux := http.NewServeMux()
	mux.Handle(httpPath, h)
	return mux
}

// requireToken answers 401 to requests without "Authorization: Bearer <token>".
// The comparison takes the same time whatever the guess, and the token is
// never logged.
func requireToken(token string, next http.Handler) http.Handler {
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="omnidev"`)
			http.Error(w, "missing or wrong bearer token: send Authorization: Bearer <token>", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// serveHTTP serves srv on ln until ctx ends, then shuts down within
// shutdownGrace, cancelling what is still running.
func serveHTTP(ctx context.Context, ln net.Listener, h http.Handler, e *engine.Engine, logger *slog.Logger) error {
	hs := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve HTTP: %w", err)
	case <-ctx.Done():
	}
	e.CancelRuns()
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		hs.Close() // streams still open after the grace period
	}
	return nil
}

// httpURL is the URL clients use for a listener.
func httpURL(ln net.Listener) string {
	addr := ln.Addr().(*net.TCPAddr)
	host := addr.IP.String()
	if addr.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, fmt.Sprint(addr.Port)) + httpPath
}
