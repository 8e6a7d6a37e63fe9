package server

import (
	"context"
	"net/http"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// requestHeader carries our id of the HTTP request a tool call arrived in,
// from the middleware to the tool handler (which sees the request's headers
// but not its context). A client's own value is always overwritten.
const requestHeader = "X-Omnidev-Request"

// httpRequests links tool calls to the HTTP requests that carry them. With
// protocol versions before 2026-07-28, the SDK keeps a handler running after
// its client has gone: this is how a run learns that nobody will read its
// result, and ends.
type httpRequests struct {
	mu   sync.Mutex
	next uint64
	open map[string]trackedRequest
}

type trackedRequest struct {
	ctx     context.Context
	cancel  context.CancelFunc
	session string
}

func newHTTPRequests() *httpRequests {
	return &httpRequests{open: map[string]trackedRequest{}}
}

// middleware tracks POSTs while they are served, and ends the calls of a
// session its client DELETEs (the SDK would otherwise wait for them before
// closing the session).
func (t *httpRequests) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		session := r.Header.Get("Mcp-Session-Id")
		switch r.Method {
		case http.MethodDelete:
			t.cancelSession(session)
		case http.MethodPost:
			ctx, cancel := context.WithCancel(r.Context())
			defer cancel()
			id := t.add(trackedRequest{ctx: ctx, cancel: cancel, session: session})
			defer t.remove(id)
			r.Header.Set(requestHeader, id)
		}
		next.ServeHTTP(w, r)
	})
}

func (t *httpRequests) add(r trackedRequest) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.next++
	id := strconv.FormatUint(t.next, 10)
	t.open[id] = r
	return id
}

func (t *httpRequests) remove(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.open, id)
}

func (t *httpRequests) cancelSession(session string) {
	if session == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, r := range t.open {
		if r.session == session {
			r.cancel()
		}
	}
}

// context returns the context of the HTTP request a call arrived in: done
// when its client disconnects or deletes its session. Nil when the call did
// not come over HTTP (stdio, where the end of stdin cancels handlers).
func (t *httpRequests) context(extra *mcp.RequestExtra) context.Context {
	if t == nil || extra == nil || extra.Header == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if r, ok := t.open[extra.Header.Get(requestHeader)]; ok {
		return r.ctx
	}
	return nil
}
