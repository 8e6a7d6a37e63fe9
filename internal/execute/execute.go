package execute

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/omnidev/omnidev/internal/changes"
	"github.com/omnidev/omnidev/internal/egress"
	"github.com/omnidev/omnidev/internal/isolate"
	"github.com/omnidev/omnidev/internal/runfolder"
	"github.com/omnidev/omnidev/internal/runs"
	"github.com/omnidev/omnidev/internal/typecheck"
)

// MaxCodeBytes is the largest program Run accepts. A whole program an agent
// writes is a few kilobytes; a megabyte is a mistake (or data that belongs
// in a file the program reads).
const MaxCodeBytes = 1 << 20

// Errors the agent (or the user) must act on. Run wraps them with a message
// that says what to do.
var (
	ErrRuntimeNotFound  = errors.New("runtime not found")
	ErrEmptyCode        = errors.New("empty code")
	ErrCodeTooLarge     = errors.New("code too large")
	ErrInvalidTimeout   = errors.New("invalid timeout")
	ErrNetworkIsolation = isolate.ErrNetworkIsolation
	// ErrIsolation: the run cannot be contained as [sandbox] isolation
	// asks (no Landlock where namespaces are refused).
	ErrIsolation = isolate.ErrIsolation
)

// Executor runs programs in one repository. Runs are serialized, within
// the process and across processes: they share the run folder's main.ts and
// the worktree, and what a run changed is only meaningful if no other run
// changes files at the same time.
type Executor struct {
	root   string
	iso    *isolate.Isolator
	logger *slog.Logger
	// turn holds a token while a run is in progress. A channel rather than
	// a mutex so that a queued run can give up when its context is done.
	turn chan struct{}
	// lock serializes runs with other processes' (see runLock); taken
	// while holding turn.
	lock runLock
	// recorder finds what each run changed. Guarded by turn, as is
	// everything below.
	recorder *changes.Recorder
	// store records every run, for omnidev runs and undo; opened by the
	// first run that needs it. Guarded by storeMu, not turn: a program's
	// own calls (runs.undo) reach it during its run (see Store).
	storeMu sync.Mutex
	store   *runs.Store
	// spare is an isolated run started in advance for the next run (see
	// prepareSpare); nil when there is none.
	spare  *process
	closed bool
	// keep is [runs] keep, which a reload may change during a run.
	keep atomic.Int64
	// runsKey returns the key that signs the run records (SetRunsKey),
	// asked when the store is first opened; by default one of this
	// executor's own.
	runsKey func() ([]byte, error)
}

// New returns the executor of the repository at root. A nil logger
// discards.
func New(root string, logger *slog.Logger) *Executor {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	key := make([]byte, 32)
	rand.Read(key)
	return &Executor{root: root, iso: isolate.New(), logger: logger, turn: make(chan struct{}, 1),
		lock:     runLock{path: filepath.Join(root, ".omni", "run.lock")},
		recorder: changes.NewRecorder(root, logger), runsKey: func() ([]byte, error) { return key, nil }}
}

// SetRunsKey sets where the user's key that signs the run records comes
// from (trust.Store.RunsKey), asked when the store is first opened, so
// that a server that runs nothing neither reads nor makes it. When key
// fails, runs are not recorded, and each says why. Without it, an
// executor signs with a key of its own, and reads only the records it
// made. Call it before the first run.
func (e *Executor) SetRunsKey(key func() ([]byte, error)) {
	e.storeMu.Lock()
	defer e.storeMu.Unlock()
	e.runsKey = key
}

// Warm starts building, in the background, the baseline that lets runs
// report their changes in O(changes), and returns. A server calls it when
// it starts, so that its first run neither walks the worktree twice nor
// waits for a walk. A run that comes while the build is under way waits
// for it: the build is a walk already partly done, where falling back
// would cost a walk before the run and another after it. It also checks,
// in the background, the sandbox's init, and logs why omnidev-sandbox is
// not used when it is there but cannot be.
func (e *Executor) Warm() {
	go func() {
		if _, problem := e.iso.InitPath(); problem != "" {
			e.logger.Warn("runs start omnidev itself as the sandbox's init, a few milliseconds slower each", "reason", problem)
		}
	}()
	e.turn <- struct{}{}
	defer func() { <-e.turn }()
	e.recorder.Warm()
}

// Request is one program to run. The caller resolves configuration: Run
// reads no config, and of the server's own environment only what git reads
// to find the global excludes file (HOME, XDG_CONFIG_HOME) and PATH, to find
// the runtime when Env's PATH does not.
type Request struct {
	// Code is the whole TypeScript file, written verbatim to main.ts.
	Code string
	// Folder is the run folder main.ts is written to, and the runner in it
	// the runtime runs.
	Folder *runfolder.Folder
	// Runtime is a preset (bun, deno, node) used when Command is empty;
	// Command is an explicit argv, to which the runner's path is appended.
	// A relative program path with a slash is relative to the repository root.
	Runtime string
	Command []string
	// Env is the only environment the program gets ("NAME=value").
	Env []string
	// Timeout bounds the program from the moment it is let run (after the
	// worktree is recorded); time spent waiting for an earlier run counts
	// against ctx only.
	Timeout time.Duration
	// MaxOutputBytes caps stdout and stderr each.
	MaxOutputBytes int
	// Network false runs the program without any network (not even loopback).
	Network bool
	// Egress, with Network false, is the socket of the egress proxy the
	// program reaches the listed hosts through (see isolate.Program).
	Egress string
	// Isolation is what contains the run (namespaces, the filesystem view,
	// limits); nil runs it on the host in its own process group.
	Isolation *isolate.Policy
	// Progress, if set, is called at least every second while the program
	// runs, never concurrently and never after Run returns. A slow callback
	// skips reports but does not delay a timeout or cancellation.
	Progress func(Progress)
	// TimeoutSource names what set Timeout, for the line a timed-out run
	// gets on stderr ("the timeout_ms argument", "[sandbox] timeout in ...").
	TimeoutSource string
	// Cancelled says what a cancellation of ctx means, for the line a
	// cancelled run gets on stderr ("it was interrupted (Ctrl-C)"); empty:
	// the call was cancelled by its client or a stopping server.
	Cancelled string
	// Secrets are replaced by [secret NAME] in the returned output.
	Secrets []Secret
	// ProgramEnded, if set, is called once the program has ended, before
	// what it changed is measured: work done on the program's behalf
	// (runs.undo through the relay) ends there, so that the change report
	// holds all of it and the next run none.
	ProgramEnded func()
}

// Progress reports a running program.
type Progress struct {
	Elapsed                  time.Duration
	StdoutBytes, StderrBytes int64
	// Message, when set, is a wrapped MCP tool's progress message,
	// forwarded by the engine rather than measured by Run.
	Message string
}

// Result is what a run did. A program that failed is a normal Result with a
// non-zero ExitCode, not an error.
type Result struct {
	// RunID names the run's record (omnidev runs, omnidev undo); empty
	// when it could not be recorded (stderr says why).
	RunID string `json:"run_id"`
	// ExitCode is the program's exit status; 128+n if signal n killed it;
	// -1 when it timed out or was cancelled.
	ExitCode int    `json:"exit_code"`
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
	// ChangedFiles, DiffStat and Changes cover what this run changed,
	// against each file's content just before it: see changes.Change. DiffStat
	// counts every change; ChangedFiles and Changes list at most
	// MaxListedChanges of them (see setChanges) and ChangesOmitted says how
	// many more there are.
	ChangedFiles   []string         `json:"changed_files"`
	DiffStat       DiffStat         `json:"diff_stat"`
	Changes        []changes.Change `json:"changes"`
	ChangesOmitted int              `json:"changes_omitted"`
	// DurationMS is the program's wall time, from the moment it is let run
	// (after the worktree is recorded) to its exit.
	DurationMS int64     `json:"duration_ms"`
	TimedOut   bool      `json:"timed_out"`
	Cancelled  bool      `json:"cancelled"`
	Truncated  Truncated `json:"truncated"`
	// Isolation says what contained the run: "namespaces", with what was
	// not enforced on this machine, or "none: " and the reason.
	Isolation string `json:"isolation"`
	// Network records where a run with a list of hosts went (at most
	// egress.MaxRecorded hosts; NetworkOmitted counts the rest). Empty
	// for a run with the network on or off.
	Network        []egress.Host `json:"network,omitempty"`
	NetworkOmitted int           `json:"network_omitted,omitempty"`
	// OutOfMemory is true when the memory limit stopped the program; its
	// stderr then ends with a line naming the limit.
	OutOfMemory bool `json:"out_of_memory"`
	// Calls are the wrapped servers' tools the program called, in the order
	// it called them, at most MaxListedCalls; CallsOmitted counts the rest.
	// The executor leaves them empty: the engine, which serves the calls,
	// fills them in.
	Calls        []ToolCall `json:"calls"`
	CallsOmitted int        `json:"calls_omitted"`
	// TypeCheck says what the check before the run did: "off", "ok",
	// "errors", or "not done: " and why (no compiler, a compiler failure).
	// TypeErrors are the errors it found, at most typecheck.MaxErrors, and
	// TypeErrorsOmitted counts the rest. The engine fills them in.
	TypeCheck         string                `json:"typecheck"`
	TypeErrors        []typecheck.TypeError `json:"type_errors"`
	TypeErrorsOmitted int                   `json:"type_errors_omitted"`
	// Warnings are the caller's to fill in: problems of the configuration
	// the run was given (file and line), a reload that failed.
	Warnings []string `json:"warnings,omitempty"`
}

// MaxListedCalls bounds Result.Calls: a program that calls a tool in a
// loop would otherwise fill the answer with one line per call.
const MaxListedCalls = 50

// ToolCall is one call of a wrapped server's tool by a program.
type ToolCall struct {
	Capability string `json:"capability"`
	Tool       string `json:"tool"`
	// MS is how long the call took, from the request to the answer.
	MS int64 `json:"ms"`
	OK bool  `json:"ok"`
	// Error is the first line of why the call failed: the server's
	// JSON-RPC error, or the text of a result it marked isError.
	Error string `json:"error,omitempty"`
}

// Truncated says which streams lost their middle to the output cap.
type Truncated struct {
	Stdout bool `json:"stdout"`
	Stderr bool `json:"stderr"`
}

// DiffStat sums Changes.
type DiffStat struct {
	Files      int `json:"files"`
	Insertions int `json:"insertions"`
	Deletions  int `json:"deletions"`
}

// Run writes req.Code to the run folder, runs it with the runtime from the
// repository root and reports its output and what it changed. Runs wait for
// one another, in this process and in others (.omni/run.lock); a run still
// waiting returns ctx's error when ctx is done. A
// run cancelled while the program runs returns a Result with Cancelled set
// (and the changes made so far).
func (e *Executor) Run(ctx context.Context, req Request) (*Result, error) {
	if err := validate(req); err != nil {
		return nil, err
	}
	path, err := e.lookupRuntime(req)
	if err != nil {
		return nil, err
	}
	select {
	case e.turn <- struct{}{}:
		defer func() { <-e.turn }()
	case <-ctx.Done():
		return nil, fmt.Errorf("wait for the previous run to finish: %w", ctx.Err())
	}
	// Checked again: select picks at random when both cases are ready.
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("wait for the previous run to finish: %w", err)
	}
	unlock, err := e.lock.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()

	if err := req.Folder.WriteMain(req.Code); err != nil {
		return nil, err
	}
	t0 := time.Now()
	prog := isolate.Program{
		Path:    path,
		Args:    argv(req.Runtime, req.Command, req.Folder),
		Root:    e.root,
		Dir:     e.root,
		Env:     req.Env,
		Network: req.Network,
		Egress:  req.Egress,
	}
	p, spare, err := e.startRun(prog, req)
	if err != nil {
		return nil, err
	}
	// The runtime boots, held at the gate, while the worktree is recorded.
	t1 := time.Now()
	before, err := e.recorder.Before(ctx)
	if err != nil {
		p.abort()
		return nil, err
	}
	if err := p.run.Ready(); err != nil {
		p.abort()
		if !spare {
			return nil, err
		}
		// The run prepared in advance died while it waited: start afresh.
		if p, _, err = e.startRun(prog, req); err != nil {
			return nil, err
		}
		if err := p.run.Ready(); err != nil {
			p.abort()
			return nil, err
		}
	}
	var pending *runs.Pending
	store, storeErr := e.openStore()
	if storeErr == nil {
		pending = store.Prepare(before)
	}
	t2 := time.Now()
	p.release()
	o := p.wait(ctx, req.Timeout, req.Progress)
	if req.ProgramEnded != nil {
		req.ProgramEnded()
	}
	t3 := time.Now()

	res := &Result{
		ExitCode:    o.exitCode,
		DurationMS:  o.duration.Milliseconds(),
		TimedOut:    o.timedOut,
		Cancelled:   o.cancelled,
		Isolation:   o.isolation,
		OutOfMemory: o.outOfMemory,
	}
	res.Stdout, res.Truncated.Stdout = p.stdout.String()
	res.Stderr, res.Truncated.Stderr = p.stderr.String()
	explain(res, req, e.root)
	redact(res, req.Secrets)
	// A cancelled run still reports what it changed: the CLI prints it
	// after ^C, and the walk is bounded.
	changed, err := before.Changes(context.WithoutCancel(ctx))
	if err != nil {
		// The program ran: its result stands, without the change report.
		res.Stderr += fmt.Sprintf("\nomnidev: %v; this run's changes are not reported (git status shows the worktree)\n", err)
		changed = nil
	}
	if req.Isolation != nil {
		go e.prepareSpare(prog, req.Isolation)
	}
	res.setChanges(changed)
	if storeErr == nil {
		var rec *runs.Record
		if rec, storeErr = store.Record(pending, runs.Run{Program: req.Code, ExitCode: res.ExitCode, Duration: o.duration}, changed); storeErr == nil {
			res.RunID = rec.ID
		}
	}
	if storeErr != nil {
		res.Stderr += fmt.Sprintf("\nomnidev: %v; this run cannot be undone\n", storeErr)
	}
	e.logger.Debug("run finished",
		"exit_code", res.ExitCode, "timed_out", res.TimedOut, "cancelled", res.Cancelled,
		"changed", res.DiffStat.Files, "files", before.Files(), "tracked", before.Tracked(),
		"start", t1.Sub(t0).Round(time.Microsecond),
		"snapshot", t2.Sub(t1).Round(time.Microsecond),
		"program", t3.Sub(t2).Round(time.Microsecond),
		"changes", time.Since(t3).Round(time.Microsecond))
	return res, nil
}

// startRun starts prog: in the run prepared in advance when it was set up
// for the same isolation (spare is then true), else in a new one.
func (e *Executor) startRun(prog isolate.Program, req Request) (p *process, spare bool, err error) {
	run, err := e.iso.Prepare(prog, req.Isolation)
	if err != nil {
		return nil, false, err
	}
	if s := e.spare; s != nil && req.Isolation != nil {
		e.spare = nil
		if req.Isolation != nil && s.run.Key() == run.Key() && s.launch(prog, req.MaxOutputBytes) == nil {
			s.run.Serve(run)
			run.Discard()
			return s, true, nil
		}
		s.abort()
	}
	if p, err = spawn(run, prog); err != nil {
		return nil, false, err
	}
	if err := p.launch(prog, req.MaxOutputBytes); err != nil {
		p.abort()
		return nil, false, err
	}
	return p, false, nil
}

// prepareSpare starts, while nobody waits, the isolated run the next run
// will most likely need: its init creates the namespaces, the view and the
// cgroups, then waits; the next run with the same isolation only has its
// program launched there. An isolated run costs several milliseconds of
// process start and setup, which this takes off the call's path.
func (e *Executor) prepareSpare(prog isolate.Program, policy *isolate.Policy) {
	e.turn <- struct{}{}
	defer func() { <-e.turn }()
	if e.closed || e.spare != nil {
		return
	}
	run, err := e.iso.Prepare(prog, policy)
	if err != nil {
		return
	}
	p, err := spawn(run, prog)
	if err != nil {
		e.logger.Debug("cannot prepare the next run's sandbox", "err", err)
		return
	}
	e.spare = p
}

// Close stops keeping track of the worktree between runs (see
// changes.Recorder.Close) and releases the run prepared in advance. It
// waits for a run in progress. Runs after Close still work, walking the
// worktree before and after.
func (e *Executor) Close() error {
	e.turn <- struct{}{}
	defer func() { <-e.turn }()
	e.closed = true
	e.recorder.Close()
	if e.spare != nil {
		e.spare.abort()
		e.spare = nil
	}
	return nil
}

func validate(req Request) error {
	switch {
	case strings.TrimSpace(req.Code) == "":
		return fmt.Errorf("%w: pass a whole TypeScript program in code", ErrEmptyCode)
	case len(req.Code) > MaxCodeBytes:
		return fmt.Errorf("%w: %d bytes, the limit is %d; move data into a file the program reads", ErrCodeTooLarge, len(req.Code), MaxCodeBytes)
	case req.Timeout <= 0:
		return fmt.Errorf("%w: the timeout must be positive, got %v", ErrInvalidTimeout, req.Timeout)
	case req.Folder == nil:
		return errors.New("run: no run folder prepared")
	case req.MaxOutputBytes <= 0:
		return fmt.Errorf("run: max output bytes must be positive, got %d", req.MaxOutputBytes)
	}
	return nil
}

// lookupRuntime finds the runtime on the program's PATH, else on the
// server's: the configured passthrough list may leave PATH out, and the
// server was started where the runtime is installed.
func (e *Executor) lookupRuntime(req Request) (string, error) {
	command := req.Command
	if len(command) > 0 && strings.Contains(command[0], "/") && !filepath.IsAbs(command[0]) {
		command = append([]string{filepath.Join(e.root, command[0])}, command[1:]...)
	}
	path, err := LookupRuntime(e.root, req.Runtime, command, req.Env)
	if err == nil || !errors.Is(err, ErrRuntimeNotFound) {
		return path, err
	}
	if p, err2 := LookupRuntime(e.root, req.Runtime, command, os.Environ()); err2 == nil {
		return p, nil
	}
	return "", err
}

func (e *Executor) openStore() (*runs.Store, error) {
	e.storeMu.Lock()
	defer e.storeMu.Unlock()
	if e.store == nil {
		key, err := e.runsKey()
		if err != nil {
			return nil, err
		}
		s, err := runs.Open(e.root, int(e.keep.Load()), key)
		if err != nil {
			return nil, err
		}
		if aside := s.SetAside(); aside != "" {
			e.logger.Warn("the run records in .omni/runs were not made with your key (a clone's, another user's, or an older omnidev's): moved aside, not read", "moved_to", aside)
		}
		e.store = s
	}
	e.store.SetKeep(int(e.keep.Load()))
	return e.store, nil
}

// KeepRuns sets how many run records are kept (runs.DefaultKeep if n <= 0),
// from the next run on.
func (e *Executor) KeepRuns(n int) { e.keep.Store(int64(n)) }

// Store returns the store of run records without waiting for the run in
// progress: for the calls a running program makes (runs.list, show and
// undo through the relay), which come while Run holds the turn and the run
// lock, so Runs would wait for ever. The worktree is then the program's:
// its own undo changing files is part of its run, reported as such. The
// store serializes its methods itself. Anything else uses Runs.
func (e *Executor) Store() (*runs.Store, error) { return e.openStore() }

// Runs calls f with the store of run records, between runs: an undo must
// not race a program writing the same files.
func (e *Executor) Runs(ctx context.Context, f func(*runs.Store) error) error {
	select {
	case e.turn <- struct{}{}:
		defer func() { <-e.turn }()
	case <-ctx.Done():
		return fmt.Errorf("wait for the run in progress to finish: %w", ctx.Err())
	}
	if err := os.MkdirAll(filepath.Dir(e.lock.path), 0o755); err != nil {
		return err
	}
	unlock, err := e.lock.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	s, err := e.openStore()
	if err != nil {
		return err
	}
	return f(s)
}

// MaxListedChanges bounds the files a Result lists. A run that generates
// thousands of files must not return a result of megabytes that an agent
// reads whole; diff_stat still counts them, and git lists them all. 50
// entries with their changed_files cost about 2k tokens, a fifth of the
// answer budget (docs/tools.md).
const MaxListedChanges = 50

// setChanges fills the change fields from all, which are in path order.
// Past MaxListedChanges, the largest changes (lines inserted plus deleted)
// are the ones listed: a hand edit stays visible among generated files.
// Slices are never nil, so JSON shows [].
func (r *Result) setChanges(all []changes.Change) {
	r.DiffStat = DiffStat{Files: len(all)}
	for _, c := range all {
		r.DiffStat.Insertions += c.Insertions
		r.DiffStat.Deletions += c.Deletions
	}
	r.ChangesOmitted = max(len(all)-MaxListedChanges, 0)
	listed := all
	if r.ChangesOmitted > 0 {
		listed = slices.Clone(all)
		slices.SortStableFunc(listed, func(a, b changes.Change) int {
			return cmp.Compare(b.Insertions+b.Deletions, a.Insertions+a.Deletions)
		})
		listed = listed[:MaxListedChanges]
		slices.SortFunc(listed, func(a, b changes.Change) int { return strings.Compare(a.Path, b.Path) })
	}
	r.Changes = listed
	if r.Changes == nil {
		r.Changes = []changes.Change{}
	}
	r.ChangedFiles = make([]string, len(r.Changes))
	for i, c := range r.Changes {
		r.ChangedFiles[i] = c.Path
	}
}
