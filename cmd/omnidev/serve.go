package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/omnidev/omnidev/internal/server"
)

func runServe(ctx context.Context, env *cliEnv, args []string) error {
	fs := env.flags("serve")
	logFile := fs.String("log-file", "", "append logs to this `file` instead of stderr")
	level := fs.String("log-level", "info", "log `level`: debug, info, warn or error")
	httpAddr := fs.String("http", "", "serve Streamable HTTP at http://`ADDR`/mcp instead of stdio (e.g. 127.0.0.1:7777; port 0 picks one)")
	token := fs.String("token", "", "bearer `token` HTTP clients must send (default $OMNIDEV_TOKEN); required off loopback")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	root, err := env.root()
	if err != nil {
		return err
	}
	if f, ok := env.stdin.(*os.File); ok && *httpAddr == "" && isTerminal(f) {
		self := "omnidev"
		if exe, err := os.Executable(); err == nil {
			self = exe // `omnidev` may not be on PATH (bin/omnidev): the Inspector must find it
		}
		self, root := shellQuote(self), shellQuote(root)
		fmt.Fprintf(env.stderr, terminalNotice, self, root, self, root)
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(*level)); err != nil {
		return fmt.Errorf("--log-level %q: use debug, info, warn or error", *level)
	}
	// Stdout carries JSON-RPC only: every log line goes to stderr or the file.
	var out io.Writer = env.stderr
	if *logFile != "" {
		f, err := os.OpenFile(*logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("open log file: %w", err)
		}
		defer f.Close()
		out = f
	}
	logger := slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: lvl}))
	if *token == "" {
		*token = env.getenv("OMNIDEV_TOKEN")
	}
	return server.Serve(ctx, server.ServeOptions{
		Root: root, Version: versionString(), Environ: env.environ, Logger: logger,
		HTTPAddr: *httpAddr, Token: *token, NewRelay: newRelay, OnIndexBuild: env.memory.enter,
	})
}

// terminalNotice greets someone who typed `omnidev serve` in a terminal,
// where it would otherwise wait in silence for JSON-RPC.
const terminalNotice = `omnidev serve is an MCP server over stdio (JSON-RPC on stdin and stdout): an MCP host
(Claude Code, Cursor, VS Code...) normally starts it. To try it by hand, use the MCP Inspector:
  npx @modelcontextprotocol/inspector %s serve --dir %s
  npx @modelcontextprotocol/inspector --cli %s serve --dir %s --method tools/list
Waiting for JSON-RPC on stdin; Ctrl-C stops it.
`

// shellQuote returns s as one word of a POSIX shell command line.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:,+=@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
