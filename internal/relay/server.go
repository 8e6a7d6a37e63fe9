package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/omnidev/omnidev/internal/capability"
)

const (
	// startTimeout bounds starting a server and listing its tools. npx may
	// download a package first, which takes seconds, not minutes.
	startTimeout = time.Minute
	// terminateGrace is how long a stdio server gets to exit after its
	// stdin is closed, before SIGTERM (and later SIGKILL).
	terminateGrace = 2 * time.Second
	// stableAfter: a session that lived this long before it ended resets
	// the crash count, so one crash a day never waits for a backoff.
	stableAfter = 30 * time.Second
	maxBackoff  = 30 * time.Second
)

// passEnv is the part of omnidev's environment a stdio server gets.
var passEnv = [...]string{"PATH", "HOME", "LANG", "TERM", "TMPDIR"}

// server is one wrapped MCP server and its current session.
type server struct {
	r    *Relay
	id   string
	spec *capability.MCPServer

	mu        sync.Mutex
	cs        *mcp.ClientSession
	since     time.Time     // when cs was opened
	starting  chan struct{} // closed when the start in progress ends
	ready     bool
	tools     []capability.Tool
	err       error
	crashes   int
	retryAt   time.Time
	closed    bool
	stopGroup func() // kills what is left of a stdio server's process group
	// starting holds the stop of a stdio server being started, so that
	// close ends it too.
	stopStarting func()

	notifyMu sync.Mutex // OnChange never runs concurrently for one server
}

func newServer(r *Relay, id string, spec *capability.MCPServer) *server {
	return &server{r: r, id: id, spec: spec}
}

func (s *server) notify() {
	if s.r.opts.OnChange == nil {
		return
	}
	s.notifyMu.Lock()
	defer s.notifyMu.Unlock()
	s.r.opts.OnChange(s.id)
}

// session returns the open session, starting the server if none is open.
// One start runs at a time; callers wait for it under their own ctx.
func (s *server) session(ctx context.Context) (*mcp.ClientSession, error) {
	for {
		s.mu.Lock()
		switch {
		case s.closed:
			s.mu.Unlock()
			return nil, errClosed
		case s.cs != nil:
			cs := s.cs
			s.mu.Unlock()
			return cs, nil
		case s.starting != nil:
			ch := s.starting
			s.mu.Unlock()
			select {
			case <-ch:
				s.mu.Lock()
				cs, err := s.cs, s.err
				s.mu.Unlock()
				if cs == nil && err != nil {
					return nil, err
				}
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		if wait := time.Until(s.retryAt); wait > 0 {
			err := s.err
			s.mu.Unlock()
			return nil, fmt.Errorf("%w (crashed %d times in a row; next restart in %v)", err, s.crashes, wait.Round(100*time.Millisecond))
		}
		s.starting = make(chan struct{})
		s.mu.Unlock()
		go s.start()
	}
}

// start starts the server and lists its tools; it runs on its own
// goroutine, so that a caller giving up does not abort it for the others.
func (s *server) start() {
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	begin := time.Now()
	cs, stopGroup, err := s.connect(ctx)
	var tools []capability.Tool
	if err == nil {
		tools, err = listTools(ctx, cs)
		if err != nil {
			err = fmt.Errorf("list tools: %w", err)
			cs.Close()
			stopGroup()
		}
	}
	s.mu.Lock()
	ch := s.starting
	s.starting = nil
	s.stopStarting = nil
	s.ready = true
	if err == nil && s.closed {
		err = errClosed
		cs.Close()
		stopGroup()
	}
	if err != nil {
		s.err = fmt.Errorf("start MCP server %s: %w", s.spec.Target(), err)
		s.crashes++
		s.retryAt = time.Now().Add(backoff(s.crashes))
	} else {
		s.cs, s.since, s.tools, s.err, s.stopGroup = cs, time.Now(), tools, nil, stopGroup
	}
	logErr := s.err
	s.mu.Unlock()
	// Waiters are released only after OnChange has run, so that what they
	// do next (run a program importing the module) sees the tools.
	defer close(ch)
	if logErr != nil {
		s.r.logger.Warn("wrapped MCP server did not start", "capability", s.id, "error", logErr)
	} else {
		s.r.logger.Info("wrapped MCP server started", "capability", s.id, "server", s.spec, "tools", len(tools), "duration", time.Since(begin).Round(time.Millisecond))
		go s.watch(cs)
	}
	s.notify()
}

// backoff is the wait before restart number crashes+1: none after a first
// crash, then doubling from a second.
func backoff(crashes int) time.Duration {
	if crashes <= 1 {
		return 0
	}
	d := time.Second << min(crashes-2, 5)
	return min(d, maxBackoff)
}

// watch waits for cs to end and records it.
func (s *server) watch(cs *mcp.ClientSession) {
	werr := cs.Wait()
	reason := "it closed the connection"
	if werr != nil && !errors.Is(werr, io.EOF) {
		reason = werr.Error()
	}
	s.ended(cs, reason)
}

// ended records that cs is over unless the server was stopped or cs was
// already replaced, so that the next call starts the server again. A call
// that failed with the session calls it at once: the next call must not
// pick the dead session before watch notices.
func (s *server) ended(cs *mcp.ClientSession, reason string) {
	s.mu.Lock()
	if s.cs != cs {
		s.mu.Unlock()
		return
	}
	s.cs = nil
	stop := s.stopGroup
	s.stopGroup = nil
	if time.Since(s.since) > stableAfter {
		s.crashes = 0
	}
	s.crashes++
	s.retryAt = time.Now().Add(backoff(s.crashes))
	s.err = fmt.Errorf("MCP server %s exited: %s; it is started again on the next call", s.spec.Target(), reason)
	err := s.err
	s.mu.Unlock()
	go cs.Close()
	stop()
	s.r.logger.Warn("wrapped MCP server exited", "capability", s.id, "error", err)
	s.notify()
}

// close ends the session and the server's processes.
func (s *server) close() {
	s.mu.Lock()
	s.closed = true
	cs, stop, starting := s.cs, s.stopGroup, s.stopStarting
	s.cs, s.stopGroup, s.stopStarting = nil, nil, nil
	s.mu.Unlock()
	if cs != nil {
		cs.Close()
	}
	if stop != nil {
		stop()
	}
	if starting != nil {
		starting()
	}
}

// relist lists the tools again after the server said they changed.
func (s *server) relist(cs *mcp.ClientSession) {
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	tools, err := listTools(ctx, cs)
	if err != nil {
		s.r.logger.Warn("wrapped MCP server: list tools after a change", "capability", s.id, "error", err)
		return
	}
	s.mu.Lock()
	if s.cs != cs {
		s.mu.Unlock()
		return
	}
	s.tools = tools
	s.mu.Unlock()
	s.r.logger.Info("wrapped MCP server changed its tools", "capability", s.id, "tools", len(tools))
	s.notify()
}

func listTools(ctx context.Context, cs *mcp.ClientSession) ([]capability.Tool, error) {
	var tools []capability.Tool
	for t, err := range cs.Tools(ctx, nil) { // follows nextCursor
		if err != nil {
			return nil, err
		}
		ct := capability.Tool{Name: t.Name, Title: t.Title, Description: t.Description}
		if ct.Title == "" && t.Annotations != nil {
			ct.Title = t.Annotations.Title
		}
		var merr error
		if t.InputSchema != nil {
			ct.InputSchema, merr = json.Marshal(t.InputSchema)
		}
		if t.OutputSchema != nil && merr == nil {
			ct.OutputSchema, merr = json.Marshal(t.OutputSchema)
		}
		if merr != nil {
			return nil, fmt.Errorf("tool %s: encode schema: %w", t.Name, merr)
		}
		tools = append(tools, ct)
	}
	slices.SortFunc(tools, func(a, b capability.Tool) int { return strings.Compare(a.Name, b.Name) })
	return tools, nil
}

// sessionProtocol is the protocol version the relay asks servers for: the
// last one with sessions, which the relay holds for each server's life,
// and with the log messages it forwards (2026-07-28 deprecates them and
// makes each request carry what initialize negotiated). Servers may answer
// an older one.
const sessionProtocol = "2025-11-25"

// connect starts the server (stdio) or reaches it (HTTP) and initializes
// a session. stopGroup kills what is left of a stdio server's processes.
func (s *server) connect(ctx context.Context) (cs *mcp.ClientSession, stopGroup func(), err error) {
	var cur atomic.Pointer[mcp.ClientSession]
	client := mcp.NewClient(&mcp.Implementation{Name: "omnidev", Title: "omnidev relay"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			if cs := cur.Load(); cs != nil {
				go s.relist(cs)
			}
		},
		LoggingMessageHandler: func(ctx context.Context, req *mcp.LoggingMessageRequest) {
			p := req.Params
			s.r.logger.Log(ctx, logLevel(p.Level), "wrapped MCP server log", "capability", s.id, "logger", p.Logger, "data", p.Data)
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			s.r.progress(req.Params)
		},
	})
	stopGroup = func() {}
	var transport mcp.Transport
	switch s.spec.Transport {
	case capability.TransportHTTP:
		transport = &mcp.StreamableClientTransport{
			Endpoint:   s.spec.URL,
			HTTPClient: &http.Client{Transport: &headerTransport{headers: s.spec.Headers, base: http.DefaultTransport}},
		}
	default:
		cmd := exec.Command(s.spec.Command, s.spec.Args...)
		cmd.Dir = s.spec.Dir
		cmd.Env = s.environ()
		cmd.Stderr = &logWriter{logger: s.r.logger, id: s.id}
		setProcessGroup(cmd)
		if transport, stopGroup, err = startStdio(cmd); err != nil {
			return nil, nil, err
		}
		s.mu.Lock()
		closed := s.closed
		if !closed {
			s.stopStarting = stopGroup
		}
		s.mu.Unlock()
		if closed {
			stopGroup()
			return nil, nil, errClosed
		}
	}
	cs, err = client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: sessionProtocol})
	if err != nil {
		stopGroup()
		return nil, nil, err
	}
	cur.Store(cs)
	// Servers send log messages only once asked; one without the logging
	// capability refuses, which is fine.
	_ = cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"})
	return cs, stopGroup, nil
}

// environ is a stdio server's whole environment.
func (s *server) environ() []string {
	var env []string
	for _, name := range passEnv {
		if _, set := s.spec.Env[name]; set {
			continue
		}
		for _, kv := range s.r.opts.Environ {
			if v, ok := strings.CutPrefix(kv, name+"="); ok {
				env = append(env, name+"="+v)
				break
			}
		}
	}
	for k, v := range s.spec.Env {
		env = append(env, k+"="+v)
	}
	slices.Sort(env)
	return env
}

func logLevel(l mcp.LoggingLevel) slog.Level {
	switch l {
	case "debug":
		return slog.LevelDebug
	case "info", "notice":
		return slog.LevelInfo
	case "warning":
		return slog.LevelWarn
	}
	return slog.LevelError
}

// logWriter sends a stdio server's stderr, line by line, to omnidev's log.
type logWriter struct {
	logger *slog.Logger
	id     string
	mu     sync.Mutex
	buf    []byte
}

// maxLogLine bounds one logged stderr line.
const maxLogLine = 4 << 10

func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	rest := w.buf
	for {
		i := slices.Index(rest, '\n')
		if i < 0 {
			break
		}
		line := string(rest[:min(i, maxLogLine)])
		rest = rest[i+1:]
		if strings.TrimSpace(line) != "" {
			w.logger.Info("wrapped MCP server stderr", "capability", w.id, "line", line)
		}
	}
	if len(rest) > maxLogLine {
		rest = rest[:0]
	}
	w.buf = append(w.buf[:0], rest...)
	return len(p), nil
}

// headerTransport adds [mcp] headers to each request, and turns a 401 or
// 403 into an error that says which header to set: omnidev does not run
// OAuth flows.
type headerTransport struct {
	headers map[string]string
	base    http.RoundTripper
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, v := range t.headers {
		req.Header.Set(k, v)
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil || (resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden) {
		return resp, err
	}
	resp.Body.Close()
	header := "Authorization"
	if h := resp.Header.Get("WWW-Authenticate"); h != "" && !strings.HasPrefix(strings.ToLower(h), "bearer") && !strings.HasPrefix(strings.ToLower(h), "basic") {
		header = "the header its WWW-Authenticate (" + h + ") asks for"
	}
	if _, set := t.headers["Authorization"]; set && header == "Authorization" {
		return nil, fmt.Errorf("%s refused the Authorization header with %s; check the token it is built from ([mcp] headers in capability.toml). OAuth sign-in is not supported", req.URL.Redacted(), resp.Status)
	}
	return nil, fmt.Errorf("%s answered %s; set %s in [mcp] headers, e.g. headers = { Authorization = \"Bearer ${TOKEN}\" } with TOKEN declared secret in [env]. OAuth sign-in is not supported", req.URL.Redacted(), resp.Status, header)
}

// call calls one tool with args (a JSON object) and returns the
// CallToolResult as the SDK decoded it, encoded again: the same shape
// whatever the server's transport.
func (s *server) call(ctx context.Context, tool string, args json.RawMessage, progress func(string)) (data []byte, failure string, err error) {
	cs, err := s.session(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, "", &CallError{Message: fmt.Sprintf("call %s: cancelled while MCP server %s was starting", tool, s.spec.Target())}
		}
		return nil, "", &CallError{Message: fmt.Sprintf("call %s: %v", tool, err)}
	}
	callCtx := ctx
	if s.spec.Timeout > 0 {
		var cancel context.CancelFunc
		callCtx, cancel = context.WithTimeoutCause(ctx, s.spec.Timeout, errCallTimeout)
		defer cancel()
	}
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	// Servers on the newer protocol take the log level per request (older
	// ones got it once, from SetLoggingLevel, and ignore the key).
	meta := map[string]any{mcp.MetaKeyLogLevel: "info"}
	if progress != nil {
		token, done := s.r.progressToken(progress)
		defer done()
		meta["progressToken"] = token
	}
	params := &mcp.CallToolParams{Name: tool, Arguments: args}
	params.SetMeta(meta)
	res, err := cs.CallTool(callCtx, params)
	if err != nil {
		var werr *jsonrpc.Error
		switch {
		case errors.As(err, &werr):
			return nil, "", &CallError{Message: werr.Message, Code: werr.Code}
		case errors.Is(context.Cause(callCtx), errCallTimeout):
			return nil, "", &CallError{Message: fmt.Sprintf("call %s: no answer within the [mcp] timeout of %v; the call was cancelled", tool, s.spec.Timeout)}
		case ctx.Err() != nil:
			return nil, "", &CallError{Message: fmt.Sprintf("call %s: cancelled (the run ended or timed out)", tool)}
		}
		// The session ended under the call: the server crashed.
		s.mu.Lock()
		dead := s.cs != cs
		s.mu.Unlock()
		if dead || errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF) {
			s.ended(cs, "during a call of "+tool)
			return nil, "", &CallError{Message: fmt.Sprintf("call %s: MCP server %s exited during the call; it is started again on the next call", tool, s.spec.Target())}
		}
		// Or the SDK's transport could not read what the server sent (a
		// message over maxFrameBytes), which ends the session too.
		if cs.Ping(ctx, nil) != nil && ctx.Err() == nil {
			s.ended(cs, err.Error())
			return nil, "", &CallError{Message: fmt.Sprintf("call %s: %v; the session with MCP server %s ended, and the server is started again on the next call", tool, err, s.spec.Target())}
		}
		return nil, "", &CallError{Message: fmt.Sprintf("call %s: %v", tool, err)}
	}
	if data, err = json.Marshal(res); err != nil {
		return nil, "", &CallError{Message: fmt.Sprintf("call %s: encode result: %v", tool, err)}
	}
	if len(data) > MaxResultBytes {
		return nil, "", &CallError{Message: fmt.Sprintf("call %s: the result is %.1f MiB, over the %d MiB limit; ask the tool for less (a page, a filter)", tool, float64(len(data))/(1<<20), MaxResultBytes>>20)}
	}
	if res.IsError {
		failure = "the server marked the result isError"
		for _, c := range res.Content {
			if t, ok := c.(*mcp.TextContent); ok && t.Text != "" {
				failure = t.Text
				break
			}
		}
	}
	return data, failure, nil
}

var errCallTimeout = errors.New("[mcp] timeout")
