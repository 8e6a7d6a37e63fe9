package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/omnidev/omnidev/internal/isolate"
	"github.com/omnidev/omnidev/internal/query"
	"github.com/omnidev/omnidev/internal/runs"
	"github.com/omnidev/omnidev/internal/tsgen"
)

const (
	// defaultListedRuns is what runs.list() gives without n, as
	// `omnidev runs` does.
	defaultListedRuns = 20
	// maxShownDiff bounds the diff runs.show hands a program, well below
	// the relay's 16 MiB answer limit: a program that wants more than a few
	// megabytes of diff wants a file, and the whole diff stays one command
	// or resource away.
	maxShownDiff = 4 << 20
	// maxUndos bounds the undos one run's program makes: each is a run
	// record, and records past [runs] keep are pruned, so that a program
	// undoing in a loop would otherwise push every earlier run out of
	// reach of undo.
	maxUndos = 10
)

// builtin answers one run's calls of the omnidev module (runs.list, show
// and undo), which its program makes through the relay while the executor
// holds the run: the store is reached without waiting for the run to end
// (Executor.Store), and an undo writes the worktree as the program's own
// change, reported with the run's. end, called when the program has ended,
// waits for the calls in flight and refuses later ones, so that nothing is
// done on the program's behalf once its changes are measured.
type builtin struct {
	store func() (*runs.Store, error)
	// hidden reports the worktree paths the run's program cannot read,
	// whose content runs.show leaves out; nil: none.
	hidden func(rel string) bool

	mu    sync.Mutex
	ended bool
	undos int
	calls sync.WaitGroup
}

// hiddenFromPrograms returns the worktree paths a program's view hides.
// There are none today: the sandbox shows the whole worktree, and
// [sandbox] readable and writable only widen the view. A setting that
// hides worktree files must be given here, so that runs.show does not hand
// their content back; and .omni/runs, which holds the same content, must
// then be hidden from programs as well.
func hiddenFromPrograms() func(rel string) bool { return nil }

func (e *Engine) newBuiltin() *builtin {
	return &builtin{store: e.executor.Store, hidden: hiddenFromPrograms()}
}

// end waits for the calls in flight and refuses any later one.
func (b *builtin) end() {
	b.mu.Lock()
	b.ended = true
	b.mu.Unlock()
	b.calls.Wait()
}

// call answers one call with a CallToolResult whose structuredContent the
// module's promise resolves to, or an error it rejects with.
func (b *builtin) call(ctx context.Context, tool string, args json.RawMessage) ([]byte, error) {
	b.mu.Lock()
	if b.ended {
		b.mu.Unlock()
		return nil, errors.New("omnidev: the program has ended; runs calls are answered only while it runs")
	}
	b.calls.Add(1)
	b.mu.Unlock()
	defer b.calls.Done()

	var in struct {
		N     int    `json:"n"`
		ID    string `json:"id"`
		Force bool   `json:"force"`
	}
	if len(args) > 0 {
		dec := json.NewDecoder(bytes.NewReader(args))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&in); err != nil {
			return nil, fmt.Errorf("runs.%s: invalid arguments: %v; see the omnidev module's types (omni_query include_types)", tool, err)
		}
	}
	store, err := b.store()
	if err != nil {
		return nil, fmt.Errorf("runs.%s: %w", tool, err)
	}
	var out any
	switch tool {
	case "list":
		out, err = b.list(store, in.N)
	case "show":
		out, err = b.show(store, in.ID)
	case "undo":
		out, err = b.undo(ctx, store, in.ID, in.Force)
	default:
		return nil, fmt.Errorf("omnidev: no function %q; the module has runs.list, runs.show and runs.undo", tool)
	}
	if err != nil {
		return nil, err
	}
	return json.Marshal(struct {
		Content    []struct{} `json:"content"`
		Structured any        `json:"structuredContent"`
	}{[]struct{}{}, out})
}

// runSummary is RunSummary of the module's types.
type runSummary struct {
	ID         string    `json:"id"`
	Time       time.Time `json:"time"`
	ExitCode   int       `json:"exit_code"`
	DurationMS int64     `json:"duration_ms"`
	Files      int       `json:"files"`
	Insertions int       `json:"insertions"`
	Deletions  int       `json:"deletions"`
	FirstLine  string    `json:"first_line"`
	Undoes     string    `json:"undoes,omitempty"`
}

func summarize(r *runs.Record) runSummary {
	ins, del := r.Insertions()
	first, _, _ := strings.Cut(strings.TrimSpace(r.Program), "\n")
	if r.Undoes != "" {
		first = "undo of " + r.Undoes
	}
	return runSummary{ID: r.ID, Time: r.Time, ExitCode: r.ExitCode, DurationMS: r.DurationMS,
		Files: len(r.Files), Insertions: ins, Deletions: del, FirstLine: first, Undoes: r.Undoes}
}

func (b *builtin) list(store *runs.Store, n int) (any, error) {
	if n <= 0 {
		n = defaultListedRuns
	}
	recs, err := store.List(n)
	if err != nil {
		return nil, fmt.Errorf("runs.list: %w", err)
	}
	out := make([]runSummary, len(recs))
	for i, r := range recs {
		out[i] = summarize(r)
	}
	return map[string]any{"runs": out}, nil
}

type runFile struct {
	Path       string `json:"path"`
	Status     string `json:"status"`
	Insertions int    `json:"insertions"`
	Deletions  int    `json:"deletions"`
	Withheld   bool   `json:"withheld,omitempty"`
}

type runDetail struct {
	runSummary
	Program   string    `json:"program"`
	Diff      string    `json:"diff"`
	Changes   []runFile `json:"changes"`
	Truncated bool      `json:"truncated,omitempty"`
	Note      string    `json:"note,omitempty"`
}

func (b *builtin) show(store *runs.Store, id string) (any, error) {
	rec, err := store.Get(id)
	if err != nil {
		return nil, runsError("show", err)
	}
	d := runDetail{runSummary: summarize(rec), Program: rec.Program, Changes: []runFile{}}
	for _, f := range rec.Files {
		hidden := b.hidden != nil && b.hidden(f.Path)
		d.Changes = append(d.Changes, runFile{Path: f.Path, Status: string(f.Status), Insertions: f.Insertions, Deletions: f.Deletions, Withheld: hidden})
	}
	w := &cappedWriter{max: maxShownDiff}
	if err := store.WriteDiffHiding(w, rec, b.hidden); err != nil {
		return nil, fmt.Errorf("runs.show: %w", err)
	}
	d.Diff = w.String()
	if w.cut {
		d.Truncated = true
		d.Note = fmt.Sprintf("the diff is %d bytes, cut to the first %d MiB; `omnidev runs show %s` prints it whole, and the MCP resource omni://runs/%s/diff holds it", w.total, maxShownDiff>>20, rec.ID, rec.ID)
	}
	return d, nil
}

func (b *builtin) undo(ctx context.Context, store *runs.Store, id string, force bool) (any, error) {
	b.mu.Lock()
	b.undos++
	n := b.undos
	b.mu.Unlock()
	if n > maxUndos {
		return nil, fmt.Errorf("runs.undo: a program may undo %d runs at most; undo more from a terminal with omnidev undo ID (each undo is a run record, and only the last [runs] keep are kept)", maxUndos)
	}
	// The run is resolved first, so that what is checked is what is undone.
	var rec *runs.Record
	var err error
	if id == "" {
		rec, err = store.Latest()
	} else {
		rec, err = store.Get(id)
	}
	if err != nil {
		return nil, runsError("undo", err)
	}
	// The server writes what the program asks it to: never a file the
	// program could not change itself (a run made without the sandbox may
	// have changed omni/, which the server reads as configuration).
	for _, f := range rec.Files {
		if isolate.ReadOnlyToRuns(f.Path) {
			return nil, fmt.Errorf("runs.undo: run %s changed %s, which programs may not change; undo it from a terminal: omnidev undo %s", rec.ID, f.Path, rec.ID)
		}
	}
	res, err := store.Undo(ctx, rec.ID, force)
	switch {
	case errors.Is(err, runs.ErrChangedSince) && res != nil:
		return nil, fmt.Errorf("runs.undo: run %s: %s changed since the run; nothing restored. runs.undo(%q, { force: true }) restores them too, losing those changes", rec.ID, strings.Join(res.ChangedSince, ", "), rec.ID)
	case err != nil && res != nil && len(res.Restored) > 0:
		return nil, fmt.Errorf("runs.undo: run %s: restored %s, but: %w", rec.ID, strings.Join(res.Restored, ", "), err)
	case err != nil:
		return nil, runsError("undo", err)
	}
	return res, nil
}

// runsError says, for a program, what to do about err.
func runsError(fn string, err error) error {
	switch {
	case errors.Is(err, runs.ErrNotFound):
		return fmt.Errorf("runs.%s: %s; runs.list() lists the runs kept", fn, strings.TrimSuffix(err.Error(), " (omnidev runs lists them)"))
	case errors.Is(err, runs.ErrNoRuns):
		return fmt.Errorf("runs.%s: %w; runs.list() lists the runs kept", fn, err)
	}
	return fmt.Errorf("runs.%s: %w", fn, err)
}

// withBuiltin adds the omnidev module to an omni_query answer: always to
// the empty query's summary and types, and to a query's when it asks for
// types and names runs, undo or a diff.
func withBuiltin(req query.Request, res *query.Result) {
	if strings.TrimSpace(req.Query) != "" && !(req.IncludeTypes && asksForRuns(req.Query)) {
		return
	}
	res.Summary = append(res.Summary, builtinSummary)
	decl := strings.TrimSuffix(tsgen.BuiltinDeclaration(), "\n")
	if res.TypeDefinitions == "" {
		res.TypeDefinitions = decl
	} else {
		res.TypeDefinitions += "\n\n" + decl
	}
}

// builtinSummary lists the omnidev module, which no capability provides
// and the index does not hold: an agent learns of it from the empty query's
// summary, or from a query about runs.
var builtinSummary = query.CapabilitySummary{
	ID:          tsgen.BuiltinModule,
	Module:      tsgen.BuiltinModule,
	Name:        "omnidev (built in)",
	Description: "runs.list(), runs.show(id) and runs.undo(id?, { force }): the runs omni_execute recorded, their diffs, and undoing one from a program",
	Functions:   3,
}

// runsWords are the query words that bring the omnidev module's types.
var runsWords = []string{"omnidev", "run", "runs", "undo", "revert", "diff", "rollback"}

// asksForRuns reports whether a query is about runs and undoing them.
func asksForRuns(query string) bool {
	for _, w := range strings.FieldsFunc(strings.ToLower(query), func(r rune) bool {
		return !(r >= 'a' && r <= 'z')
	}) {
		if slices.Contains(runsWords, w) {
			return true
		}
	}
	return false
}

// cappedWriter keeps the first max bytes written, cut at a line's end, and
// counts the rest.
type cappedWriter struct {
	bytes.Buffer
	max   int
	total int
	cut   bool
}

func (w *cappedWriter) Write(p []byte) (int, error) {
	w.total += len(p)
	if w.cut {
		return len(p), nil
	}
	if w.Len()+len(p) <= w.max {
		return w.Buffer.Write(p)
	}
	w.cut = true
	room := p[:w.max-w.Len()]
	if i := bytes.LastIndexByte(room, '\n'); i >= 0 {
		w.Buffer.Write(room[:i+1])
	}
	return len(p), nil
}
