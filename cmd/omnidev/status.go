package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/omnidev/omnidev/internal/engine"
)

// serverStatus parses a command without arguments of its own and reads the
// status of the repository's server.
func serverStatus(env *cliEnv, name string, args []string) (root string, st engine.ServerStatus, err error) {
	if _, err := parse(env.flags(name), args); err != nil {
		return "", st, err
	}
	if root, err = env.root(); err != nil {
		return "", st, err
	}
	st, err = engine.ReadServerStatus(root)
	return root, st, err
}

func runStatus(_ context.Context, env *cliEnv, args []string) error {
	root, st, err := serverStatus(env, "status", args)
	if errors.Is(err, engine.ErrNoServer) {
		fmt.Fprintf(env.stdout, "not running: no server for %s\n", root)
		return &exitError{code: 1}
	}
	if err != nil {
		return err
	}
	if !st.Running {
		fmt.Fprintf(env.stdout, "not running: %s names process %d, which is gone (a stale file; the next server replaces it)\n", engine.PIDFileName, st.PID)
		return &exitError{code: 1}
	}
	transport := "stdio"
	if info, err := engine.ReadServerInfo(root); err == nil && info.PID == st.PID {
		transport = info.Transport + " at " + info.URL
	}
	fmt.Fprintf(env.stdout, "running: pid %d since %s (%s ago), transport %s, repository %s\n",
		st.PID, st.Since.Format(time.RFC3339), time.Since(st.Since).Round(time.Second), transport, root)
	return nil
}

// stopWait is how long stop waits for the server to exit: longer than the
// server's own graceful shutdown.
const stopWait = 5 * time.Second

func runStop(ctx context.Context, env *cliEnv, args []string) error {
	_, st, err := serverStatus(env, "stop", args)
	if errors.Is(err, engine.ErrNoServer) {
		fmt.Fprintln(env.stdout, "no server is running for this repository; nothing to stop")
		return nil
	}
	if err != nil {
		return err
	}
	if !st.Running {
		fmt.Fprintf(env.stdout, "process %d named by %s is already gone; nothing to stop\n", st.PID, engine.PIDFileName)
		return nil
	}
	if err := askToStop(st.PID); err != nil {
		return fmt.Errorf("signal process %d: %w", st.PID, err)
	}
	deadline := time.Now().Add(stopWait)
	for time.Now().Before(deadline) {
		if !processExists(st.PID) {
			fmt.Fprintf(env.stdout, "stopped server %d\n", st.PID)
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("server %d did not stop within %v after SIGTERM; `kill -9 %d` ends it at once", st.PID, stopWait, st.PID)
}
