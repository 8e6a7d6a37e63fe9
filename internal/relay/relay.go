package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"

	"github.com/omnidev/omnidev/internal/capability"
)

// MaxResultBytes caps one tool result as the program receives it: a result
// this large is almost always a tool asked for too much at once.
const MaxResultBytes = 16 << 20

// Options configure New.
type Options struct {
	// Environ is omnidev's environment; stdio servers get its PATH, HOME,
	// LANG, TERM and TMPDIR only.
	Environ []string
	Logger  *slog.Logger
	// OnChange is called (never concurrently with itself for one server)
	// after a server's tools or state changed: listed, re-listed, failed.
	OnChange func(id string)
}

// Relay holds the wrapped servers' sessions. It is safe for concurrent use.
type Relay struct {
	opts   Options
	logger *slog.Logger

	mu      sync.Mutex
	servers map[string]*server // by capability ID
	closed  bool

	runs runs
	ln   *listener
}

// New returns a relay with no servers.
func New(opts Options) *Relay {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Relay{opts: opts, logger: opts.Logger, servers: make(map[string]*server)}
}

// Sync makes the set of servers that of specs (capability ID -> server):
// servers no longer there, or configured differently, are stopped; new
// ones are started in the background when start is true, else on their
// first call or Ensure.
func (r *Relay) Sync(specs map[string]*capability.MCPServer, start bool) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	var stop []*server
	for id, s := range r.servers {
		if spec, ok := specs[id]; !ok || !spec.Equal(s.spec) {
			stop = append(stop, s)
			delete(r.servers, id)
		}
	}
	var fresh []*server
	for _, id := range slices.Sorted(maps.Keys(specs)) {
		if _, ok := r.servers[id]; ok {
			continue
		}
		s := newServer(r, id, specs[id])
		r.servers[id] = s
		fresh = append(fresh, s)
	}
	r.mu.Unlock()
	for _, s := range stop {
		go s.close()
	}
	if start {
		for _, s := range fresh {
			go s.session(context.Background())
		}
	}
}

// Ensure starts the servers ids (if not started) and waits until each has
// listed its tools or failed to, or ctx is done.
func (r *Relay) Ensure(ctx context.Context, ids []string) {
	var wg sync.WaitGroup
	for _, id := range ids {
		if s := r.server(id); s != nil {
			wg.Go(func() { s.session(ctx) })
		}
	}
	wg.Wait()
}

// State reports the server of capability id: its tools, whether a session
// is open, whether a first attempt to start it has ended either way, and
// why it is not usable (nil when it is). Separate values, for the engine's
// interface of its own; an unknown id is neither started nor ready.
func (r *Relay) State(id string) (tools []capability.Tool, started, ready bool, err error) {
	s := r.server(id)
	if s == nil {
		return nil, false, false, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tools, s.cs != nil, s.ready, s.err
}

func (r *Relay) server(id string) *server {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.servers[id]
}

// Close stops every server and the socket, and waits for them.
func (r *Relay) Close() error {
	r.mu.Lock()
	r.closed = true
	servers := slices.Collect(maps.Values(r.servers))
	r.servers = map[string]*server{}
	ln := r.ln
	r.mu.Unlock()
	var err error
	if ln != nil {
		err = ln.close()
	}
	var wg sync.WaitGroup
	for _, s := range servers {
		wg.Go(s.close)
	}
	wg.Wait()
	return err
}

// CallError is a failed call as the program sees it: a message, and the
// JSON-RPC error code when the server answered with one.
type CallError struct {
	Message string `json:"message"`
	Code    int64  `json:"code,omitempty"`
}

func (e *CallError) Error() string { return e.Message }

// Call calls tool of the server of capability id with args (a JSON object;
// none is {}) and returns the MCP CallToolResult as JSON. progress, if
// set, receives the server's progress messages for this call.
func (r *Relay) Call(ctx context.Context, id, tool string, args json.RawMessage, progress func(string)) ([]byte, error) {
	data, _, err := r.call(ctx, id, tool, args, progress)
	return data, err
}

// call is Call that also returns the text of a result the server marked
// isError (a call the server refused or failed), "" otherwise.
func (r *Relay) call(ctx context.Context, id, tool string, args json.RawMessage, progress func(string)) (data []byte, failure string, err error) {
	s := r.server(id)
	if s == nil {
		return nil, "", &CallError{Message: fmt.Sprintf("capability %q wraps no MCP server here; check that it is enabled and has an [mcp] section", id)}
	}
	return s.call(ctx, tool, args, progress)
}

var errClosed = errors.New("omnidev is shutting down")
