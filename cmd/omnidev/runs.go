package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/omnidev/omnidev/internal/execute"
	"github.com/omnidev/omnidev/internal/runs"
	"github.com/omnidev/omnidev/internal/trust"
)

// withRuns calls f with the repository's store of run records, between
// runs (it waits for one in progress, in any process): for an undo.
func (env *cliEnv) withRuns(ctx context.Context, f func(*runs.Store) error) error {
	root, err := env.root()
	if err != nil {
		return err
	}
	ex := execute.New(root, nil)
	defer ex.Close()
	ex.SetRunsKey(trust.Open(env.environ).RunsKey)
	return ex.Runs(ctx, func(s *runs.Store) error {
		env.noteAside(s)
		return f(s)
	})
}

// readRuns calls f with the store at once, a run in progress or not: for
// what only reads it (a run's record is written whole, or not yet).
func (env *cliEnv) readRuns(f func(*runs.Store) error) error {
	root, err := env.root()
	if err != nil {
		return err
	}
	key, err := trust.Open(env.environ).RunsKey()
	if err != nil {
		return err
	}
	s, err := runs.Open(root, 0, key)
	if err != nil {
		return err
	}
	env.noteAside(s)
	return f(s)
}

func runRuns(ctx context.Context, env *cliEnv, args []string) error {
	fs := env.flags("runs")
	limit := fs.Int("n", 20, "list the last `N` runs")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) == 0:
		return env.readRuns(func(s *runs.Store) error {
			recs, err := s.List(*limit)
			if err != nil {
				return err
			}
			if *asJSON {
				return env.printJSON(recs)
			}
			for _, r := range recs {
				ins, del := r.Insertions()
				first, _, _ := strings.Cut(strings.TrimSpace(r.Program), "\n")
				if r.Undoes != "" {
					first = "undo of " + r.Undoes
				}
				fmt.Fprintf(env.stdout, "%-9s %s  exit %-3d %3d files +%d -%d  %s\n", r.ID,
					r.Time.Local().Format(time.DateTime), r.ExitCode, len(r.Files), ins, del, trim(first, 60))
			}
			return nil
		})
	case len(pos) == 2 && pos[0] == "show":
		return env.readRuns(func(s *runs.Store) error {
			r, err := s.Get(pos[1])
			if err != nil {
				return err
			}
			if *asJSON {
				return env.printJSON(struct {
					*runs.Record
					Program string `json:"program"`
				}{r, r.Program})
			}
			fmt.Fprintf(env.stdout, "run %s  %s  exit %d  %d ms\n", r.ID, r.Time.Local().Format(time.DateTime), r.ExitCode, r.DurationMS)
			if r.Undoes != "" {
				fmt.Fprintf(env.stdout, "undo of run %s\n", r.Undoes)
			}
			fmt.Fprintf(env.stdout, "\n%s\n", strings.TrimRight(r.Program, "\n"))
			fmt.Fprintln(env.stdout)
			return s.WriteDiff(env.stdout, r)
		})
	}
	fmt.Fprintln(env.stderr, "omnidev runs: list the runs, or `omnidev runs show RUN`")
	return errUsage
}

func trim(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}

func runUndo(ctx context.Context, env *cliEnv, args []string) error {
	fs := env.flags("undo")
	force := fs.Bool("force", false, "also restore files changed since the run, losing those changes")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		fmt.Fprintln(env.stderr, "omnidev undo: give at most one RUN (default: the latest run with changes)")
		return errUsage
	}
	id := ""
	if len(pos) == 1 {
		id = pos[0]
	}
	return env.withRuns(ctx, func(s *runs.Store) error {
		res, err := s.Undo(ctx, id, *force)
		if res != nil {
			if *asJSON {
				if jerr := env.printJSON(res); jerr != nil {
					return jerr
				}
			} else {
				printUndo(env, res)
			}
		}
		if errors.Is(err, runs.ErrChangedSince) {
			return &exitError{code: 3, err: err}
		}
		return err
	})
}

func printUndo(env *cliEnv, res *runs.UndoResult) {
	for _, p := range res.ChangedSince {
		fmt.Fprintf(env.stderr, "    changed since %s\n", p)
	}
	for _, p := range res.NotKept {
		fmt.Fprintf(env.stderr, "    not restored  %s\n", p)
	}
	for _, p := range res.Restored {
		fmt.Fprintf(env.stderr, "    restored      %s\n", p)
	}
	if res.RunID != "" {
		fmt.Fprintf(env.stdout, "undid run %s: %d files restored; `omnidev undo %s` redoes it\n", res.Undone, len(res.Restored), res.RunID)
	}
}

// noteAside says so when opening the store moved away records that the
// user's key did not sign.
func (env *cliEnv) noteAside(s *runs.Store) {
	if aside := s.SetAside(); aside != "" {
		fmt.Fprintf(env.stderr, "omnidev: the run records in .omni/runs were not made with your key (a clone's, another user's, or an older omnidev's): moved to %s, not read\n", aside)
	}
}
