package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/omnidev/omnidev/internal/capability"
	"github.com/omnidev/omnidev/internal/execute"
	"github.com/omnidev/omnidev/internal/query"
	"github.com/omnidev/omnidev/internal/runfolder"
	"github.com/omnidev/omnidev/internal/runs"
	"github.com/omnidev/omnidev/internal/trust"
	"github.com/omnidev/omnidev/internal/typecheck"
)

// Engine is one repository's live state: the current snapshot (registry and
// run folder), the query index and the executor. It is safe for concurrent use.
type Engine struct {
	root    string
	environ []string
	logger  *slog.Logger

	index    *query.Index
	indexTmp string // private index folder when another process holds .omni/index
	// reloadErr is why the last reload failed; nil after a good one.
	reloadErr atomic.Pointer[string]
	executor  *execute.Executor

	snap     atomic.Pointer[snapshot]
	reloadMu sync.Mutex // one reload at a time
	// runGate is held shared by a run and exclusively by a reload: the
	// configuration is never read while a program runs, which may have
	// created a config file that the isolation takes away when it ends.
	runGate sync.RWMutex

	listenersMu sync.Mutex
	listeners   []func(*capability.Registry) // see OnReload

	// runs ends when the engine stops running programs (CancelRuns): the
	// SDK keeps a handler's context alive until its client goes away, so a
	// server that is shutting down needs its own way to end them.
	runs       context.Context
	cancelRuns context.CancelFunc

	// relay holds the sessions of wrapped MCP servers; onDemand: they start
	// on a program's first import, not at Open.
	relay    Relay
	onDemand bool
	closed   bool // guarded by reloadMu
}

// snapshot is what one load of the repository produced. It is immutable and
// swapped as a whole, so a request sees one consistent state from start to end.
type snapshot struct {
	// base is the registry as loaded; reg is base with the wrapped
	// servers' tools filled in, which everything else uses.
	base   *capability.Registry
	reg    *capability.Registry
	folder *runfolder.Folder
}

// Options configure Open.
type Options struct {
	// Environ is the process environment executed code may draw from
	// (through the config's passthrough list and declared variables only).
	Environ []string
	Logger  *slog.Logger
	// NewRelay makes the client of the MCP servers capabilities wrap
	// (relay.New, adapted); nil leaves them unavailable, each saying so.
	NewRelay NewRelay
	// ServersOnDemand starts wrapped MCP servers when a program imports
	// them (omnidev exec) instead of in the background at Open (serve).
	ServersOnDemand bool
	// OnIndexBuild is the process's memory policy while the query index is
	// built from nothing (see query.Options.OnBuild); nil leaves the
	// process alone. The engine sets no process-wide setting itself.
	OnIndexBuild func() (end func(docs int))
}

// Open loads the repository at root, opens (or builds) its index and
// prepares its sandbox. A broken config is an error; broken capabilities are
// problems in the registry, logged, and left out.
func Open(ctx context.Context, root string, opts Options) (*Engine, error) {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	e := &Engine{root: root, environ: opts.Environ, logger: logger}
	e.runs, e.cancelRuns = context.WithCancel(context.Background())

	start := time.Now()
	reg, err := load(root, opts.Environ)
	if err != nil {
		return nil, err
	}
	if err := checkOwnFolders(root); err != nil {
		return nil, err
	}
	// .omni/state is where capabilities and wrapped servers keep their
	// files (MEMORY_FILE = ".omni/state/memory.json"); servers expect the
	// folder to exist.
	if err := os.MkdirAll(filepath.Join(root, ".omni", "state"), 0o755); err != nil {
		return nil, fmt.Errorf("create .omni/state: %w", err)
	}
	removeStaleEgress(root)
	if err := e.openIndex(ctx, reg, query.Options{Logger: logger, OnBuild: opts.OnIndexBuild}); err != nil {
		return nil, err
	}
	e.executor = execute.New(root, logger)
	e.executor.KeepRuns(reg.KeepRuns)
	e.executor.SetRunsKey(trust.Open(opts.Environ).RunsKey)
	if err := e.openRelay(opts.NewRelay, opts.ServersOnDemand); err != nil {
		e.Close()
		return nil, err
	}
	full := e.withTools(reg)
	folder, err := runfolder.Prepare(root, full)
	if err != nil {
		e.Close()
		return nil, fmt.Errorf("prepare sandbox: %w", err)
	}
	if len(mcpServers(reg)) > 0 {
		// The index was opened on the registry alone: it learns that the
		// wrapped servers are starting, which a first query must say.
		if _, err := e.index.Update(ctx, full); err != nil {
			e.Close()
			return nil, err
		}
	}
	e.snap.Store(&snapshot{base: reg, reg: full, folder: folder})
	e.relay.Sync(mcpServers(reg), !e.onDemand)
	e.logLoad("loaded", reg, start, "index", e.index.Stats())
	return e, nil
}

// openIndex opens the repository's index in .omni/index. When another
// omnidev process holds it (several servers may serve one repository), it
// builds a private index in a temporary folder instead, removed at Close.
func (e *Engine) openIndex(ctx context.Context, reg *capability.Registry, opts query.Options) error {
	idx, err := query.Open(ctx, filepath.Join(e.root, ".omni", "index"), reg, opts)
	if errors.Is(err, query.ErrLocked) {
		tmp, terr := os.MkdirTemp("", "omnidev-index-*")
		if terr != nil {
			return fmt.Errorf("create private index folder: %w", terr)
		}
		e.logger.Info("index in use by another omnidev process; using a private one", "dir", tmp)
		if idx, err = query.Open(ctx, tmp, reg, opts); err != nil {
			os.RemoveAll(tmp)
		} else {
			e.indexTmp = tmp
		}
	}
	if err != nil {
		return fmt.Errorf("open index: %w", err)
	}
	e.index = idx
	return nil
}

// Root returns the repository root.
func (e *Engine) Root() string { return e.root }

// Registry returns the current registry snapshot.
func (e *Engine) Registry() *capability.Registry { return e.snap.Load().reg }

// Query answers an omni_query request on the current index.
func (e *Engine) Query(ctx context.Context, req query.Request) (*query.Result, error) {
	res, err := e.index.Search(ctx, req)
	if err == nil {
		withBuiltin(req, res)
		res.Warnings = e.Warnings()
	}
	return res, err
}

// Warnings are what the agent must be told with every result while they
// last: the last reload failed (the last good state is served), and the
// problems of the configuration served, each naming its file and line.
// MCP logging is deprecated, so results carry them.
func (e *Engine) Warnings() []string {
	var out []string
	if msg := e.reloadErr.Load(); msg != nil {
		out = append(out, *msg)
	}
	for _, p := range e.snap.Load().base.Problems {
		out = append(out, p.String())
	}
	return out
}

// ExecRequest is one omni_execute call.
type ExecRequest struct {
	Code string
	// Timeout lowers the configured timeout; zero means the configured one.
	Timeout time.Duration
	// TimeoutArg names the argument Timeout came from ("timeout_ms",
	// "--timeout"), for the line a timed-out run gets on stderr.
	TimeoutArg string
	Progress   func(execute.Progress)
	// TypeCheck overrides [sandbox] typecheck for this run: "off", "warn"
	// or "error"; empty means the configured mode.
	TypeCheck string
	// Cancelled says what a cancellation of the call means (see
	// execute.Request.Cancelled).
	Cancelled string
}

// Execute runs a program in the current sandbox. The configured timeout caps
// the requested one: a call may ask for less, never more.
func (e *Engine) Execute(ctx context.Context, r ExecRequest) (*execute.Result, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(e.runs, cancel)()
	snap := e.snap.Load()
	cfg := snap.reg.Sandbox
	timeout := cfg.Timeout
	source := fmt.Sprintf("[sandbox] timeout in %s (%v unless set there; a call may ask for less, never more)", snap.reg.Layout.Config, capability.DefaultTimeout)
	if r.Timeout < 0 {
		return nil, fmt.Errorf("%w: got %v", execute.ErrInvalidTimeout, r.Timeout)
	}
	if r.Timeout > 0 && r.Timeout < timeout {
		timeout = r.Timeout
		source = "the requested timeout"
		if r.TimeoutArg != "" {
			source = "the " + r.TimeoutArg + " argument"
		}
	}
	mode, err := typeCheckMode(r.TypeCheck, cfg)
	if err != nil {
		return nil, err
	}
	relayEnv, progress, programEnded, endRelay := e.beginRelayRun(ctx, timeout, snap.reg, r.Code, r.Progress)
	defer endRelay() // a second call, after the one below, does nothing
	e.runGate.RLock()
	defer e.runGate.RUnlock()
	snap = e.snap.Load() // the servers it started may have listed their tools
	// Checked before anything runs: in "error" mode, a program with type
	// errors writes nothing and calls no tool.
	var checked execute.Result
	if err := e.typeCheck(ctx, snap.reg, r.Code, mode, &checked); err != nil {
		return nil, err
	}
	if mode == typecheck.Error && len(checked.TypeErrors) > 0 {
		return notRun(&checked), nil
	}
	env := append(snap.reg.Env.Environ(), relayEnv...)
	out, err := e.startEgress(snap.reg)
	if err != nil {
		return nil, err
	}
	var egressSocket string
	if out != nil {
		env = append(env, out.env...)
		egressSocket = out.proxy.Path()
	}
	res, err := e.executor.Run(ctx, execute.Request{
		Code:           r.Code,
		Folder:         snap.folder,
		Runtime:        cfg.Runtime,
		Command:        cfg.Command,
		Env:            env,
		Timeout:        timeout,
		MaxOutputBytes: cfg.MaxOutputBytes,
		Network:        cfg.Network,
		Egress:         egressSocket,
		Isolation:      policy(cfg),
		Progress:       progress,
		TimeoutSource:  source,
		Cancelled:      r.Cancelled,
		Secrets:        secrets(snap.reg),
		ProgramEnded:   programEnded,
	})
	log := endRelay()
	if out != nil {
		out.finish(res)
	}
	if err != nil {
		return nil, err
	}
	res.Calls = []execute.ToolCall{}
	if log != nil {
		res.Calls, res.CallsOmitted = log.end()
	}
	res.TypeCheck, res.TypeErrors, res.TypeErrorsOmitted = checked.TypeCheck, checked.TypeErrors, checked.TypeErrorsOmitted
	res.Warnings = e.Warnings()
	return res, nil
}

// secrets returns the values of the variables capabilities declare
// secret = true, which a run's output must not carry back.
func secrets(reg *capability.Registry) []execute.Secret {
	var out []execute.Secret
	for _, c := range reg.Capabilities {
		for _, d := range c.EnvDecls {
			if v, ok := reg.Env.Lookup(d.Name); ok && d.Secret && v.Value != "" {
				out = append(out, execute.Secret{Name: d.Name, Value: v.Value})
			}
		}
	}
	// A wrapped server may hand its own token back (an "env" tool).
	for _, v := range reg.Withheld {
		out = append(out, execute.Secret{Name: v.Name, Value: v.Value})
	}
	return out
}

// RuntimeError says why programs cannot run, naming the missing runtime
// and how to install it; nil when the configured runtime is found.
// It looks where runs look: the programs' PATH, then the server's.
func (e *Engine) RuntimeError() error {
	reg := e.Registry()
	sb := reg.Sandbox
	if _, err := execute.LookupRuntime(e.root, sb.Runtime, sb.Command, reg.Env.Environ()); err == nil {
		return nil
	}
	_, err := execute.LookupRuntime(e.root, sb.Runtime, sb.Command, e.environ)
	return err
}

// Reload loads the repository again and swaps registry, index content and
// sandbox in. On error the last good state stays and the error is returned.
func (e *Engine) Reload(ctx context.Context) error {
	e.runGate.Lock()
	defer e.runGate.Unlock()
	e.reloadMu.Lock()
	defer e.reloadMu.Unlock()
	err := e.reload(ctx)
	if err != nil {
		msg := err.Error()
		e.reloadErr.Store(&msg)
	} else {
		e.reloadErr.Store(nil)
	}
	return err
}

func (e *Engine) reload(ctx context.Context) error {
	start := time.Now()
	reg, err := load(e.root, e.environ)
	if err != nil {
		return fmt.Errorf("reload: %w (keeping the last good configuration)", err)
	}
	// Servers no longer enabled, or configured differently, stop here;
	// the others keep their sessions.
	e.relay.Sync(mcpServers(reg), !e.onDemand)
	full := e.withTools(reg)
	folder, err := runfolder.Prepare(e.root, full)
	if err != nil {
		return fmt.Errorf("reload: prepare sandbox: %w (keeping the last good configuration)", err)
	}
	stats, err := e.index.Update(ctx, full)
	if err != nil {
		return fmt.Errorf("reload: update index: %w (keeping the last good configuration)", err)
	}
	e.snap.Store(&snapshot{base: reg, reg: full, folder: folder})
	e.executor.KeepRuns(reg.KeepRuns)
	e.logLoad("reloaded", reg, start, "index", stats)
	e.reloaded(full)
	return nil
}

// logLoad logs a load or reload with its counts and duration, then each
// problem. attrs are added to the first line.
func (e *Engine) logLoad(msg string, reg *capability.Registry, start time.Time, attrs ...any) {
	docs := 0
	for _, c := range reg.Capabilities {
		docs += len(c.Docs) + len(c.Rules) + len(c.Skills) + 1
	}
	e.logger.Info(msg, append([]any{
		"profile", reg.Profile,
		"capabilities", len(reg.Capabilities),
		"documents", docs,
		"problems", len(reg.Problems),
		"duration", time.Since(start).Round(time.Microsecond),
	}, attrs...)...)
	for _, p := range reg.Problems {
		e.logger.Warn("capability problem", "problem", p.String())
	}
	for _, w := range reg.Warnings {
		e.logger.Info("capability warning", "warning", w.String())
	}
}

// WarmRuns starts building, in the background, the worktree baseline that
// change reports are measured against, so the first run does not pay for
// it. Serve and exec call it; a query never runs a program and does not.
func (e *Engine) WarmRuns() { e.executor.Warm() }

// CancelRuns kills the programs running and makes queued and later
// executions return at once, cancelled.
func (e *Engine) CancelRuns() { e.cancelRuns() }

// Close cancels the runs, stops the wrapped MCP servers, and releases the
// executor's worktree tracking and the index.
func (e *Engine) Close() error {
	e.cancelRuns()
	e.reloadMu.Lock()
	e.closed = true
	e.reloadMu.Unlock()
	var rerr error
	if e.relay != nil {
		rerr = e.relay.Close()
	}
	err := errors.Join(rerr, e.executor.Close(), e.index.Close())
	if e.indexTmp != "" {
		os.RemoveAll(e.indexTmp)
	}
	return err
}

// Logger returns the logger the engine was opened with.
func (e *Engine) Logger() *slog.Logger { return e.logger }

// Runs calls f with the store of run records, between runs. A running
// program's own calls (the omnidev module) must not use it: the run they
// come from holds what it waits for (see builtin).
func (e *Engine) Runs(ctx context.Context, f func(*runs.Store) error) error {
	return e.executor.Runs(ctx, f)
}

// ReadRuns calls f with the store of run records at once, without waiting
// for a run in progress (here or in another process): for what only reads
// it, since a run's record is written whole or not yet.
func (e *Engine) ReadRuns(f func(*runs.Store) error) error {
	s, err := e.executor.Store()
	if err != nil {
		return err
	}
	return f(s)
}
