package relay

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/omnidev/omnidev/internal/capability"
	"github.com/omnidev/omnidev/internal/tsgen"
	"github.com/omnidev/omnidev/internal/unixsock"
)

// The channel between a running program and omnidev is a Unix socket that
// speaks JSON lines. The program's first line is {"token": "..."}, the token
// omnidev gave that run (Env). Then each request is
//
//	{"id": 1, "capability": "everything", "tool": "echo", "args": {...}}
//
// and each answer, in any order,
//
//	{"id": 1, "result": <CallToolResult>}  or  {"id": 1, "error": {"message": "...", "code": -32602}}
//
// A socket is used rather than an inherited descriptor because it also
// reaches a program in its own namespaces: a path socket crosses network
// namespaces, and connect() works on a read-only mount.

// maxLine bounds one request line: arguments of a tool call, not data.
const maxLine = MaxResultBytes

type runs struct {
	mu       sync.Mutex
	byToken  map[string]*run
	progress map[string]func(string) // progress token -> callback
	next     int
}

type run struct {
	ctx      context.Context
	cancel   context.CancelFunc
	progress func(string)
	// redact rewrites every line the program gets back: the values of
	// secrets a server may hand back (an "env" tool) are removed.
	redact func([]byte) []byte
	// onCall, if set, is told of each call when it starts, and of its
	// outcome through the function it returns.
	onCall func(capability, tool string) (done func(failure string))
	// builtin answers the calls of capability.BuiltinModule; nil: none.
	builtin func(ctx context.Context, tool string, args json.RawMessage) ([]byte, error)
	conns   map[net.Conn]bool
}

// BeginRun registers a run and returns the variables (tsgen.EnvSocket, tsgen.EnvToken)
// its program needs to call wrapped servers through the socket opened by
// Listen. end cancels the run's calls still in flight (the servers get
// notifications/cancelled) and closes its connections. progress, if set,
// receives the wrapped servers' progress messages of the run's calls.
// redact, if set, rewrites each answer line before the program gets it.
// onCall, if set, is called as each of the run's calls starts, in the order
// the program sent them, and the function it returns when the call ended:
// with "" when it succeeded, else why it failed (a JSON-RPC error, or the
// text of a result the server marked isError).
//
// builtin, if set, answers the calls a program makes of the capability
// named capability.BuiltinModule ("omnidev": no wrapped server may take
// the name): it returns an MCP CallToolResult as JSON, or an error the
// program's promise rejects with. The relay knows nothing of what those
// calls do; it gives them the run's context, redaction and size limit.
func (r *Relay) BeginRun(ctx context.Context, progress func(string), redact func([]byte) []byte, onCall func(capability, tool string) func(failure string), builtin func(ctx context.Context, tool string, args json.RawMessage) ([]byte, error)) (env []string, end func()) {
	token := rand.Text()
	ctx, cancel := context.WithCancel(ctx)
	rn := &run{ctx: ctx, cancel: cancel, progress: progress, redact: redact, onCall: onCall, builtin: builtin, conns: make(map[net.Conn]bool)}
	r.runs.mu.Lock()
	if r.runs.byToken == nil {
		r.runs.byToken = make(map[string]*run)
	}
	r.runs.byToken[token] = rn
	r.runs.mu.Unlock()
	r.mu.Lock()
	if r.ln != nil {
		env = []string{tsgen.EnvSocket + "=" + r.ln.rel, tsgen.EnvToken + "=" + token}
	}
	r.mu.Unlock()
	return env, func() {
		cancel()
		r.runs.mu.Lock()
		delete(r.runs.byToken, token)
		conns := rn.conns
		rn.conns = nil
		r.runs.mu.Unlock()
		for c := range conns {
			c.Close()
		}
	}
}

func (r *Relay) progressToken(cb func(string)) (token string, done func()) {
	r.runs.mu.Lock()
	defer r.runs.mu.Unlock()
	if r.runs.progress == nil {
		r.runs.progress = make(map[string]func(string))
	}
	r.runs.next++
	token = "omnidev-" + strconv.Itoa(r.runs.next)
	r.runs.progress[token] = cb
	return token, func() {
		r.runs.mu.Lock()
		delete(r.runs.progress, token)
		r.runs.mu.Unlock()
	}
}

func (r *Relay) progress(p *mcp.ProgressNotificationParams) {
	token, _ := p.ProgressToken.(string)
	r.runs.mu.Lock()
	cb := r.runs.progress[token]
	r.runs.mu.Unlock()
	if cb == nil {
		return
	}
	msg := p.Message
	switch {
	case p.Total > 0:
		msg = strings.TrimSpace(fmt.Sprintf("%s %g/%g", msg, p.Progress, p.Total))
	case msg == "":
		msg = fmt.Sprintf("%g", p.Progress)
	}
	cb(msg)
}

type listener struct {
	ln   net.Listener
	path string // absolute
	rel  string // as programs connect to it: relative to their working folder
	wg   sync.WaitGroup
}

// Listen serves the channel on a Unix socket at path, which programs reach
// as rel (relative to their working folder: sun_path holds 108 bytes, and
// repositories live in longer paths). A stale socket at path is replaced.
func (r *Relay) Listen(path, rel string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("create relay socket folder: %w", err)
	}
	os.Remove(path)
	ln, err := unixsock.Listen(path)
	if err != nil {
		return fmt.Errorf("listen on relay socket %s: %w", path, err)
	}
	l := &listener{ln: ln, path: path, rel: rel}
	r.mu.Lock()
	if r.closed || r.ln != nil {
		r.mu.Unlock()
		ln.Close()
		os.Remove(path)
		return errors.New("listen on relay socket: the relay is closed or already listening")
	}
	r.ln = l
	r.mu.Unlock()
	l.wg.Go(func() { r.accept(l) })
	return nil
}

func (l *listener) close() error {
	err := l.ln.Close()
	os.Remove(l.path)
	l.wg.Wait()
	return err
}

func (r *Relay) accept(l *listener) {
	for {
		c, err := l.ln.Accept()
		if err != nil {
			return
		}
		go r.serveConn(c)
	}
}

type request struct {
	ID         json.RawMessage `json:"id"`
	Capability string          `json:"capability"`
	Tool       string          `json:"tool"`
	Args       json.RawMessage `json:"args"`
}

// serveConn answers one program's connection.
func (r *Relay) serveConn(c net.Conn) {
	defer c.Close()
	br := bufio.NewReaderSize(c, 64<<10)
	var mu sync.Mutex // one answer written at a time
	var redact func([]byte) []byte
	write := func(data []byte) {
		if redact != nil {
			data = redact(data)
		}
		mu.Lock()
		defer mu.Unlock()
		c.Write(data)
	}
	line, err := readLine(br)
	if err != nil {
		return
	}
	var hello struct {
		Token string `json:"token"`
	}
	json.Unmarshal(line, &hello)
	r.runs.mu.Lock()
	rn := r.runs.byToken[hello.Token]
	if rn != nil && rn.conns != nil {
		rn.conns[c] = true
	}
	r.runs.mu.Unlock()
	if rn == nil {
		write(errorLine(nil, &CallError{Message: "the relay does not know this run; wrapped tools can be called only from a program omnidev runs"}))
		return
	}
	redact = rn.redact
	ctx, cancel := context.WithCancel(rn.ctx)
	defer cancel() // the program is gone: its calls in flight are cancelled
	for {
		line, err := readLine(br)
		if err != nil {
			return
		}
		var req request
		if err := json.Unmarshal(line, &req); err != nil || len(req.ID) == 0 || (len(req.Args) > 0 && req.Args[0] != '{' && string(req.Args) != "null") {
			write(errorLine(req.ID, &CallError{Message: "relay: a request must be one JSON line {id, capability, tool, args}, args an object"}))
			continue
		}
		if string(req.Args) == "null" {
			req.Args = nil
		}
		done := func(string) {}
		if rn.onCall != nil {
			done = rn.onCall(req.Capability, req.Tool)
		}
		go func() {
			data, failure, err := r.route(ctx, rn, req)
			if err != nil {
				done(err.Error())
				write(errorLine(req.ID, err))
				return
			}
			done(failure)
			out := make([]byte, 0, len(data)+len(req.ID)+24)
			out = append(out, `{"id":`...)
			out = append(out, req.ID...)
			out = append(out, `,"result":`...)
			out = append(out, data...)
			out = append(out, "}\n"...)
			write(out)
		}()
	}
}

// route sends a request to the server side it names: omnidev's own
// built-in module, or a wrapped server.
func (r *Relay) route(ctx context.Context, rn *run, req request) (data []byte, failure string, err error) {
	if req.Capability != capability.BuiltinModule {
		return r.call(ctx, req.Capability, req.Tool, req.Args, rn.progress)
	}
	if rn.builtin == nil {
		return nil, "", &CallError{Message: "the omnidev module is not served to this run; run the program with omni_execute or omnidev exec"}
	}
	data, err = rn.builtin(ctx, req.Tool, req.Args)
	if err != nil {
		return nil, "", err
	}
	if len(data) > MaxResultBytes {
		return nil, "", &CallError{Message: fmt.Sprintf("omnidev.%s: the answer is %.1f MiB, over the %d MiB limit; ask for less", req.Tool, float64(len(data))/(1<<20), MaxResultBytes>>20)}
	}
	return data, "", nil
}

func errorLine(id json.RawMessage, err error) []byte {
	var ce *CallError
	if !errors.As(err, &ce) {
		ce = &CallError{Message: err.Error()}
	}
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	data, _ := json.Marshal(struct {
		ID    json.RawMessage `json:"id"`
		Error *CallError      `json:"error"`
	}{id, ce})
	return append(data, '\n')
}

// readLine reads one line of at most maxLine bytes.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxLine {
			return nil, errors.New("relay: request line too long")
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return line, err
	}
}
