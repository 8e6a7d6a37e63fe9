package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/omnidev/omnidev/internal/capability"
	"github.com/omnidev/omnidev/internal/engine"
	"github.com/omnidev/omnidev/internal/relay"
)

// command is one subcommand. run gets the arguments after the subcommand's
// name and returns an error; an *exitError sets the exit status.
type command struct {
	name    string
	summary string
	usage   string // the arguments after the name, for --help
	run     func(ctx context.Context, env *cliEnv, args []string) error
}

// cliEnv is what every subcommand may use: the standard streams, the
// process environment, the --dir given before the subcommand, and the
// process's memory policy while an index is built.
type cliEnv struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	dir            string
	environ        []string
	memory         *indexBuildMemory
}

func commands() []command {
	return []command{
		{"serve", "serve MCP over stdio, or Streamable HTTP with --http", "[--http ADDR [--token T]] [--log-file F] [--log-level L]", runServe},
		{"init", "scaffold omni/ with an example capability", "[--project NAME]", runInit},
		{"query", "search the capabilities, like the omni_query tool", "[--limit N] [--types] [--kinds k1,k2] [--json] QUERY...", runQuery},
		{"exec", "run a TypeScript program, like the omni_execute tool", "[--timeout D] [--json] FILE|-", runExec},
		{"runs", "list recent runs, or show one's program and diff", "[-n N] [--json] [show RUN]", runRuns},
		{"undo", "restore the files a run changed (default: the latest run with changes)", "[--force] [--json] [RUN]", runUndo},
		{"status", "tell whether a server is running for this repository", "", runStatus},
		{"stop", "stop the server running for this repository", "", runStop},
		{"doctor", "check the setup and say how to fix what is missing", "", runDoctor},
		{"trust", "review and approve the MCP servers this repository's capabilities wrap", "[--yes]", runTrust},
		{"version", "print the version", "", runVersion},
	}
}

// exitError carries an exit status other than 1 for a failed command.
type exitError struct {
	code int
	err  error // nil: exit silently with code
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// errUsage reports a usage error already printed by the flag package.
var errUsage = errors.New("usage")

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	env := &cliEnv{stdin: stdin, stdout: stdout, stderr: stderr, environ: os.Environ(), memory: &indexBuildMemory{}}
	global := flag.NewFlagSet("omnidev", flag.ContinueOnError)
	global.SetOutput(stderr)
	global.StringVar(&env.dir, "dir", "", "repository `folder` (default: walk up to the folder holding omni/, else the git root)")
	global.Usage = func() { printUsage(stderr, global) }
	if err := global.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if global.NArg() == 0 {
		printUsage(stderr, global)
		return 2
	}
	name, rest := global.Arg(0), global.Args()[1:]
	if name == "help" {
		printUsage(stdout, global)
		return 0
	}
	for _, c := range commands() {
		if c.name != name {
			continue
		}
		err := c.run(ctx, env, rest)
		var ee *exitError
		switch {
		case err == nil:
			return 0
		case errors.Is(err, flag.ErrHelp):
			return 0
		case errors.Is(err, errUsage):
			return 2
		case errors.As(err, &ee):
			if ee.err != nil {
				fmt.Fprintf(stderr, "omnidev %s: %v\n", name, ee.err)
			}
			return ee.code
		default:
			fmt.Fprintf(stderr, "omnidev %s: %v\n", name, err)
			return 1
		}
	}
	fmt.Fprintf(stderr, "omnidev: unknown command %q; run `omnidev help` for the list\n", name)
	return 2
}

func printUsage(w io.Writer, global *flag.FlagSet) {
	fmt.Fprintf(w, "omnidev %s: an MCP server that gives AI agents code mode over a repository\n\n", versionString())
	fmt.Fprintf(w, "Usage: omnidev [--dir DIR] <command> [flags]\n\nCommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "\nRun `omnidev <command> --help` for a command's flags.\n")
}

// flags returns a FlagSet for a subcommand, with --dir and a usage line.
func (env *cliEnv) flags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("omnidev "+name, flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.StringVar(&env.dir, "dir", env.dir, "repository `folder` (default: walk up to the folder holding omni/, else the git root)")
	for _, c := range commands() {
		if c.name == name {
			fs.Usage = func() {
				fmt.Fprintf(env.stderr, "Usage: omnidev %s %s\n\n%s.\n\nFlags:\n", name, c.usage, capitalize(c.summary))
				fs.PrintDefaults()
			}
		}
	}
	return fs
}

// parse parses flags and positional arguments in any order.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, errUsage
		}
		if fs.NArg() == 0 {
			return positional, nil
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// root resolves the repository root from --dir or the working directory.
func (env *cliEnv) root() (string, error) {
	if env.dir != "" {
		return capability.FindRoot(env.dir)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	return capability.FindRoot(wd)
}

// openEngine opens the engine of the repository --dir names, as the tools
// use it. The caller closes it.
func (env *cliEnv) openEngine(ctx context.Context) (*engine.Engine, error) {
	root, err := env.root()
	if err != nil {
		return nil, err
	}
	return engine.Open(ctx, root, engine.Options{Environ: env.environ, NewRelay: newRelay, ServersOnDemand: true, OnIndexBuild: env.memory.enter})
}

// printJSON prints v as the tools' JSON, indented for people, with <, >
// and & as written (type definitions hold them; nobody embeds this in HTML).
func (env *cliEnv) printJSON(v any) error {
	enc := json.NewEncoder(env.stdout)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// getenv looks a variable up in the environment the CLI was given.
func (env *cliEnv) getenv(name string) string {
	for _, kv := range env.environ {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v
		}
	}
	return ""
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func runVersion(_ context.Context, env *cliEnv, args []string) error {
	if _, err := parse(env.flags("version"), args); err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "omnidev %s\n", versionString())
	return nil
}

// newRelay gives the engine the MCP client of wrapped servers: the engine
// stays free of MCP, so the composition happens here.
func newRelay(environ []string, logger *slog.Logger, onChange func(string)) engine.Relay {
	return relay.New(relay.Options{Environ: environ, Logger: logger, OnChange: onChange})
}
