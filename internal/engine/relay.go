package engine

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/omnidev/omnidev/internal/capability"
	"github.com/omnidev/omnidev/internal/execute"
	"github.com/omnidev/omnidev/internal/runfolder"
	"github.com/omnidev/omnidev/internal/tsgen"
)

// Relay is the MCP client side the engine drives (internal/relay, given by
// the caller through Options.NewRelay so that the engine itself stays free
// of MCP): sessions to the servers that capabilities wrap, and the socket
// programs call them through.
type Relay interface {
	// Listen serves programs on the Unix socket at path, which they reach
	// as rel from the repository root.
	Listen(path, rel string) error
	// Sync makes the servers those of servers (capability ID -> server),
	// starting new ones in the background when start is true.
	Sync(servers map[string]*capability.MCPServer, start bool)
	// Ensure starts the servers ids and waits until each listed its tools
	// or failed to, or ctx is done.
	Ensure(ctx context.Context, ids []string)
	// State reports one server.
	State(id string) (tools []capability.Tool, started, ready bool, err error)
	// BeginRun registers a run: env goes into its program's environment,
	// progress receives its calls' progress messages, onCall is told of each
	// call as it starts (in the program's order) and, through the function
	// it returns, of its end ("" or why it failed); builtin answers its
	// calls of the omnidev module (see builtin); end cancels its calls
	// still in flight.
	BeginRun(ctx context.Context, progress func(string), redact func([]byte) []byte, onCall func(capability, tool string) func(failure string), builtin func(ctx context.Context, tool string, args json.RawMessage) ([]byte, error)) (env []string, end func())
	Close() error
}

// NewRelay makes a Relay; onChange is called after a server's tools or
// state changed.
type NewRelay func(environ []string, logger *slog.Logger, onChange func(id string)) Relay

// noRelay stands in when no NewRelay was given: a wrapped capability is
// listed with an error saying so.
type noRelay struct{}

var errNoRelay = errors.New("this omnidev has no MCP client to start wrapped servers with")

func (noRelay) Listen(string, string) error                 { return nil }
func (noRelay) Sync(map[string]*capability.MCPServer, bool) {}
func (noRelay) Ensure(context.Context, []string)            {}
func (noRelay) BeginRun(context.Context, func(string), func([]byte) []byte, func(string, string) func(string), func(context.Context, string, json.RawMessage) ([]byte, error)) ([]string, func()) {
	return nil, func() {}
}
func (noRelay) Close() error { return nil }
func (noRelay) State(string) ([]capability.Tool, bool, bool, error) {
	return nil, false, true, errNoRelay
}

// relaySocket is the relay's socket relative to the repository root, where
// programs run: a relative path fits in sun_path however deep the
// repository is, and .omni/ stays visible (read-only) inside the sandbox.
func relaySocket() string {
	return filepath.Join(".omni", "relay", strconv.Itoa(os.Getpid())+".sock")
}

// removeStaleSockets removes the relay sockets in dir left by omnidev
// processes that are gone (kill -9 leaves its socket behind): those whose
// pid no longer names a process. A live process keeps its socket, whatever
// it is: a reused pid costs one stale file, a wrong guess another server's
// channel.
func removeStaleSockets(dir string, logger *slog.Logger) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return // no folder yet, or unreadable: Listen reports what matters
	}
	for _, ent := range entries {
		name, ok := strings.CutSuffix(ent.Name(), ".sock")
		pid, err := strconv.Atoi(name)
		if !ok || err != nil || pid <= 0 || ent.Type()&fs.ModeSocket == 0 {
			continue
		}
		if !processGone(pid) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, ent.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			logger.Warn("remove the relay socket of a process that is gone", "path", filepath.Join(dir, ent.Name()), "error", err)
			continue
		}
		logger.Info("removed the relay socket of a process that is gone", "dead_pid", pid)
	}
}

// openRelay starts the relay and its socket; Open starts the servers once
// the first snapshot is in place, since their tools update it.
func (e *Engine) openRelay(newRelay NewRelay, onDemand bool) error {
	e.relay = Relay(noRelay{})
	if newRelay != nil {
		e.relay = newRelay(e.environ, e.logger, e.toolsChanged)
	}
	rel := relaySocket()
	removeStaleSockets(filepath.Join(e.root, filepath.Dir(rel)), e.logger)
	if err := e.relay.Listen(filepath.Join(e.root, rel), rel); err != nil {
		return err
	}
	e.onDemand = onDemand
	return nil
}

func mcpServers(reg *capability.Registry) map[string]*capability.MCPServer {
	m := make(map[string]*capability.MCPServer)
	for _, c := range reg.Capabilities {
		if c.MCP != nil {
			m[c.ID] = c.MCP
		}
	}
	return m
}

// withTools returns reg with each wrapped server's tools (or error) and
// generated type definitions filled in. reg itself is not modified.
func (e *Engine) withTools(reg *capability.Registry) *capability.Registry {
	out := *reg
	out.Capabilities = make([]*capability.Capability, len(reg.Capabilities))
	for i, c := range reg.Capabilities {
		if c.MCP == nil {
			out.Capabilities[i] = c
			continue
		}
		tools, _, ready, err := e.relay.State(c.ID)
		msg := ""
		switch {
		case err != nil:
			msg = err.Error()
		case !ready:
			msg = capability.ToolsStarting
		}
		cp := c.WithTools(tools, msg)
		if len(tools) > 0 {
			cp.Types = tsgen.Generate(c.Module, tools).Body()
		}
		out.Capabilities[i] = cp
	}
	return &out
}

// toolsChanged re-derives the snapshot after a wrapped server listed its
// tools, changed them or failed: the index and the generated modules
// follow, so that a new tool is searchable and importable by the next run.
func (e *Engine) toolsChanged(id string) {
	e.reloadMu.Lock()
	defer e.reloadMu.Unlock()
	if e.closed {
		return
	}
	start := time.Now()
	snap := e.snap.Load()
	reg := e.withTools(snap.base)
	folder, err := runfolder.Prepare(e.root, reg)
	if err != nil {
		e.logger.Error("regenerate modules after a wrapped server changed", "capability", id, "error", err)
		return
	}
	stats, err := e.index.Update(context.Background(), reg)
	if err != nil {
		e.logger.Error("index tools after a wrapped server changed", "capability", id, "error", err)
		return
	}
	e.snap.Store(&snapshot{base: snap.base, reg: reg, folder: folder})
	e.reloaded(reg)
	e.logger.Info("wrapped server tools updated", "capability", id, "duration", time.Since(start).Round(time.Microsecond), "index", stats)
}

// importedServers returns the IDs of the wrapped capabilities whose module
// the program names in a string literal: those it may import.
func importedServers(reg *capability.Registry, code string) []string {
	var ids []string
	for _, c := range reg.Capabilities {
		if c.MCP != nil && (strings.Contains(code, `"`+c.Module+`"`) || strings.Contains(code, `'`+c.Module+`'`)) {
			ids = append(ids, c.ID)
		}
	}
	return ids
}

// StartServers starts every wrapped server (those not started yet) and
// waits until each has listed its tools, or failed to, and the index and
// modules follow: for a one-shot query, which must show what a server would.
func (e *Engine) StartServers(ctx context.Context) {
	var ids []string
	for _, c := range e.Registry().Capabilities {
		if c.MCP != nil {
			ids = append(ids, c.ID)
		}
	}
	e.relay.Ensure(ctx, ids)
}

// beginRelayRun readies the servers the program imports (waiting at most
// timeout for those starting) and registers the run with the relay, which
// serves every run: the omnidev module is always there, and a program may
// import it from a file of its own. It returns the variables to add to the
// program's environment, the progress callback to give the executor,
// programEnded for the executor to call when the program has ended (the
// omnidev module's calls end there), and end, which cancels the run's
// calls still in flight and returns the log of its calls; end may be
// called again.
func (e *Engine) beginRelayRun(ctx context.Context, timeout time.Duration, reg *capability.Registry, code string, progress func(execute.Progress)) (env []string, guarded func(execute.Progress), programEnded func(), end func() *callLog) {
	if ids := importedServers(reg, code); len(ids) > 0 {
		// A server still starting is waited for, as long as the run may
		// last: the program then imports its tools rather than an empty
		// module.
		wait, cancel := context.WithTimeout(ctx, timeout)
		e.relay.Ensure(wait, ids)
		cancel()
	}
	redact := redactor(secrets(reg))
	log := &callLog{redact: redact}
	b := e.newBuiltin()
	finish := func(endRun func()) func() *callLog {
		return func() *callLog { b.end(); endRun(); return log }
	}
	if progress == nil {
		env, endRun := e.relay.BeginRun(ctx, nil, redact, log.begin, b.call)
		return env, nil, b.end, finish(endRun)
	}
	// The executor's reports and the servers' come from different
	// goroutines; the callback is promised never to run concurrently.
	// Progress values must grow: the two sources measure elapsed time
	// from different moments, so each report is kept above the last one.
	var mu sync.Mutex
	var last time.Duration
	started := time.Now()
	guarded = func(p execute.Progress) {
		mu.Lock()
		defer mu.Unlock()
		if p.Elapsed <= last {
			p.Elapsed = last + time.Millisecond
		}
		last = p.Elapsed
		progress(p)
	}
	env, endRun := e.relay.BeginRun(ctx, func(msg string) {
		guarded(execute.Progress{Elapsed: time.Since(started), Message: msg})
	}, redact, log.begin, b.call)
	return env, guarded, b.end, finish(endRun)
}

// WrappedServer is one wrapped MCP server as doctor shows it.
type WrappedServer struct {
	Capability string
	Target     string
	Started    bool
	Tools      int
	Err        error
}

// WrappedServers reports the wrapped servers of the current registry.
func (e *Engine) WrappedServers() []WrappedServer {
	return wrappedServers(e.relay, e.Registry())
}

func wrappedServers(r Relay, reg *capability.Registry) []WrappedServer {
	var out []WrappedServer
	for _, c := range reg.Capabilities {
		if c.MCP == nil {
			continue
		}
		tools, started, ready, err := r.State(c.ID)
		if err == nil && !ready {
			err = errors.New("did not answer in time")
		}
		out = append(out, WrappedServer{Capability: c.ID, Target: c.MCP.Target(), Started: started, Tools: len(tools), Err: err})
	}
	return out
}
