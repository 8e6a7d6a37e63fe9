package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/omnidev/omnidev/internal/engine"
	"github.com/omnidev/omnidev/internal/execute"
)

func runExec(ctx context.Context, env *cliEnv, args []string) error {
	fs := env.flags("exec")
	timeout := fs.Duration("timeout", 0, "stop the program after this `duration` (at most the configured timeout)")
	asJSON := fs.Bool("json", false, "print the omni_execute tool's JSON result")
	typeCheck := fs.String("typecheck", "", "type-check the program first: `mode` off, warn (run anyway) or error (do not run it with errors); default: [sandbox] typecheck")
	files, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(files) != 1 {
		fmt.Fprintln(env.stderr, "omnidev exec: give one program: a FILE, or - to read it from stdin")
		return errUsage
	}
	code, err := readProgram(env.stdin, files[0])
	if err != nil {
		return err
	}
	if *timeout < 0 {
		return fmt.Errorf("--timeout must be positive, got %v", *timeout)
	}
	eng, err := env.openEngine(ctx)
	if err != nil {
		return err
	}
	eng.WarmRuns()
	defer eng.Close()
	res, err := eng.Execute(ctx, engine.ExecRequest{Code: code, Timeout: *timeout, TimeoutArg: "--timeout", TypeCheck: *typeCheck,
		Cancelled: "it was interrupted (Ctrl-C or SIGTERM)"})
	if err != nil {
		return err
	}
	printWarnings(env.stderr, res.Warnings)
	if *asJSON {
		if err := env.printJSON(res); err != nil {
			return err
		}
	} else {
		io.WriteString(env.stdout, res.Stdout)
		io.WriteString(env.stderr, res.Stderr)
		printExecSummary(env.stderr, res)
	}
	return &exitError{code: execExitStatus(res)}
}

// execExitStatus maps a run to the CLI's exit status: the program's own,
// 124 for a timeout (as timeout(1) does) and 130 for an interrupt.
func execExitStatus(res *execute.Result) int {
	switch {
	case res.TimedOut:
		return 124
	case res.Cancelled:
		return 130
	case res.ExitCode < 0:
		return 1
	}
	return res.ExitCode
}

func readProgram(stdin io.Reader, name string) (string, error) {
	var data []byte
	var err error
	if name == "-" {
		data, err = io.ReadAll(io.LimitReader(stdin, execute.MaxCodeBytes+1))
	} else {
		data, err = os.ReadFile(name)
	}
	if err != nil {
		return "", fmt.Errorf("read program: %w", err)
	}
	return string(data), nil
}

func printExecSummary(w io.Writer, res *execute.Result) {
	status := fmt.Sprintf("exit %d", res.ExitCode)
	switch {
	case res.TimedOut:
		status = "timed out"
	case res.Cancelled:
		status = "interrupted"
	}
	fmt.Fprintf(w, "--- run %s: %s in %v; %d files changed, %d insertions(+), %d deletions(-)\n", res.RunID, status,
		(time.Duration(res.DurationMS) * time.Millisecond), res.DiffStat.Files, res.DiffStat.Insertions, res.DiffStat.Deletions)
	for _, c := range res.Changes {
		fmt.Fprintf(w, "    %-8s %s (+%d -%d)\n", c.Status, c.Path, c.Insertions, c.Deletions)
	}
	if res.ChangesOmitted > 0 {
		fmt.Fprintf(w, "    ... and %d more files (git status lists them all)\n", res.ChangesOmitted)
	}
	for _, h := range res.Network {
		verdict := "allowed"
		if !h.Allowed {
			verdict = "BLOCKED"
		}
		fmt.Fprintf(w, "    network  %s:%d %s, %d connections, %d bytes out, %d in\n", h.Host, h.Port, verdict, h.Connections, h.BytesOut, h.BytesIn)
	}
	if res.NetworkOmitted > 0 {
		fmt.Fprintf(w, "    network  ... and %d more hosts\n", res.NetworkOmitted)
	}
	printCalls(w, res)
	for _, e := range res.TypeErrors {
		fmt.Fprintf(w, "    type error at line %d:%d: %s\n", e.Line, e.Column, e.Message)
	}
	if res.TypeErrorsOmitted > 0 {
		fmt.Fprintf(w, "    ... and %d more type errors\n", res.TypeErrorsOmitted)
	}
	if strings.HasPrefix(res.TypeCheck, "not done") {
		fmt.Fprintf(w, "    typecheck %s\n", res.TypeCheck)
	}
}

// printCalls prints one line per wrapped tool the program called.
func printCalls(w io.Writer, res *execute.Result) {
	for _, c := range res.Calls {
		outcome := "ok"
		if !c.OK {
			outcome = "failed: " + c.Error
		}
		fmt.Fprintf(w, "    call %s.%s %d ms %s\n", c.Capability, c.Tool, c.MS, outcome)
	}
	if res.CallsOmitted > 0 {
		fmt.Fprintf(w, "    ... and %d more calls\n", res.CallsOmitted)
	}
}

// printWarnings prints the configuration's problems a result carries, on
// stderr before the rest: they may explain it (an import that fails, a
// query without results).
func printWarnings(w io.Writer, warnings []string) {
	for _, msg := range warnings {
		fmt.Fprintf(w, "omnidev: warning: %s\n", msg)
	}
}
