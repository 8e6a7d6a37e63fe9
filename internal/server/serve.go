package server

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/omnidev/omnidev/internal/engine"
	"github.com/omnidev/omnidev/internal/watch"
)

// ServeOptions configure Serve.
type ServeOptions struct {
	Root    string
	Version string
	// Environ is the process environment (see EngineOptions).
	Environ []string
	Logger  *slog.Logger
	// HTTPAddr, when set, serves Streamable HTTP on it instead of stdio.
	HTTPAddr string
	// Token, when set, is the bearer token HTTP clients must send.
	Token string
	// Transport replaces stdio (tests); ignored with HTTPAddr.
	Transport mcp.Transport
	// NewRelay is the client of wrapped MCP servers (see engine.Options).
	NewRelay engine.NewRelay
	// OnIndexBuild is the process's memory policy while the query index is
	// built from nothing (see engine.Options).
	OnIndexBuild func() (end func(docs int))
}

// Serve runs the MCP server until ctx is cancelled or, on stdio, the client
// goes away (end of stdin); then it stops gracefully: running programs are
// killed, the watcher and the index closed, the PID file removed.
func Serve(ctx context.Context, o ServeOptions) error {
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	var ln net.Listener
	if o.HTTPAddr != "" {
		// Refuse a bad or public address before anything is created.
		var err error
		if ln, err = listenHTTP(o.HTTPAddr, o.Token); err != nil {
			return err
		}
		defer ln.Close()
	}
	// The PID file comes first: building the first index can take seconds,
	// and during them status must see this server and stop must reach it.
	pid, err := engine.WritePIDFile(o.Root, logger)
	if err != nil {
		return err
	}
	defer func() {
		if err := pid.Remove(); err != nil {
			logger.Warn("remove PID file", "err", err)
		}
	}()
	start := time.Now()
	eng, err := engine.Open(ctx, o.Root, engine.Options{Environ: o.Environ, Logger: logger, NewRelay: o.NewRelay, OnIndexBuild: o.OnIndexBuild})
	if err != nil {
		if ctx.Err() != nil {
			logger.Info("server stopped", "reason", "signal", "uptime", time.Since(start).Round(time.Millisecond))
			return nil
		}
		return err
	}
	defer eng.Close()
	eng.WarmRuns()
	// The watches (system calls, one a folder) are set while the server is
	// built (CPU), and both are done before the first request is read.
	type watching struct {
		w   *watch.Watcher
		err error
	}
	watched := make(chan watching, 1)
	go func() {
		w, err := eng.Watch(ctx)
		watched <- watching{w, err}
	}()
	requests := newHTTPRequests()
	srv, err := newServer(eng, o.Version, logger, requests)
	wa := <-watched
	if wa.w != nil {
		defer wa.w.Close()
	}
	if err != nil {
		return err
	}
	if wa.err != nil {
		return wa.err
	}

	transport := "stdio"
	if ln != nil {
		transport = "http"
		url := httpURL(ln)
		remove, err := engine.WriteServerInfo(o.Root, engine.ServerInfo{URL: url, PID: os.Getpid(), Transport: transport})
		if err != nil {
			return err
		}
		defer remove()
		logger.Info("listening on "+url, "url", url, "token", o.Token != "")
	}
	reg := eng.Registry()
	if err := eng.RuntimeError(); err != nil {
		logger.Warn("omni_execute cannot run programs: " + err.Error())
	}
	logger.Info("server started", "pid", os.Getpid(), "repository", o.Root, "profile", reg.Profile,
		"capabilities", len(reg.Capabilities), "transport", transport, "version", o.Version)

	if ln != nil {
		err = serveHTTP(ctx, ln, httpHandler(srv, requests, o.Token, logger), eng, logger)
	} else {
		t := o.Transport
		if t == nil {
			t = stdioTransport(os.Stdin, os.Stdout, logger)
		}
		err = serveStdio(ctx, srv, t, eng)
	}
	reason := "client closed the connection"
	switch {
	case ctx.Err() != nil:
		reason, err = "signal", nil
	case err != nil && !errors.Is(err, context.Canceled):
		reason = "transport error: " + err.Error()
	default:
		err = nil
	}
	logger.Info("server stopped", "reason", reason, "uptime", time.Since(start).Round(time.Millisecond))
	return err
}

// runGrace is how long a stop lets the runs in flight finish before it
// cancels them: a program about to end gets to, and its caller gets its
// result and change report, while a stop still takes seconds at most
// (`omnidev stop` waits longer than runGrace, the kill and the report).
const runGrace = 2 * time.Second

// serveStdio serves one session on t until the client leaves, or until ctx
// ends: then new calls are refused, the calls in flight are answered (their
// runs get runGrace, then are cancelled), and the session closes.
// mcp.Server.Run would cancel the handlers at once and log an error.
func serveStdio(ctx context.Context, srv *mcp.Server, t mcp.Transport, eng *engine.Engine) error {
	dt := newDrainTransport(t)
	ss, err := srv.Connect(context.WithoutCancel(ctx), dt, nil)
	if err != nil {
		return err
	}
	ended := make(chan error, 1)
	go func() { ended <- ss.Wait() }()
	select {
	case err := <-ended:
		return err
	case <-ctx.Done():
	}
	cancel := time.AfterFunc(runGrace, eng.CancelRuns)
	defer cancel.Stop()
	select {
	case <-dt.stop():
	case err := <-ended: // the client left meanwhile
		return err
	}
	dt.endReads()
	ss.Close()
	<-ended
	return nil
}
