package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/omnidev/omnidev/internal/engine"
)

// serverStatus parses a command without arguments of its own and reads the
// status of the repository's servers, the newest last.
func serverStatus(env *cliEnv, name string, args []string) (root string, servers []engine.ServerStatus, err error) {
	if _, err := parse(env.flags(name), args); err != nil {
		return "", nil, err
	}
	if root, err = env.root(); err != nil {
		return "", nil, err
	}
	servers, err = engine.ReadServers(root)
	return root, servers, err
}

// running returns the servers that are alive.
func running(servers []engine.ServerStatus) []engine.ServerStatus {
	var out []engine.ServerStatus
	for _, st := range servers {
		if st.Running {
			out = append(out, st)
		}
	}
	return out
}

func runStatus(_ context.Context, env *cliEnv, args []string) error {
	root, servers, err := serverStatus(env, "status", args)
	if errors.Is(err, engine.ErrNoServer) {
		fmt.Fprintf(env.stdout, "not running: no server for %s\n", root)
		return &exitError{code: 1}
	}
	if err != nil {
		return err
	}
	live := running(servers)
	if len(live) == 0 {
		st := servers[len(servers)-1]
		fmt.Fprintf(env.stdout, "not running: %s names process %d, which is gone (a stale file; the next server replaces it)\n", engine.PIDFileName, st.PID)
		return &exitError{code: 1}
	}
	info, infoErr := engine.ReadServerInfo(root)
	for _, st := range live {
		transport := "stdio"
		if infoErr == nil && info.PID == st.PID {
			transport = info.Transport + " at " + info.URL
		}
		fmt.Fprintf(env.stdout, "running: pid %d since %s (%s ago), transport %s, repository %s\n",
			st.PID, st.Since.Format(time.RFC3339), time.Since(st.Since).Round(time.Second), transport, root)
	}
	return nil
}

// stopWait is how long stop waits for the server to exit: longer than the
// server's own graceful shutdown.
const stopWait = 10 * time.Second

// runStop stops every server of the repository.
func runStop(ctx context.Context, env *cliEnv, args []string) error {
	_, servers, err := serverStatus(env, "stop", args)
	if errors.Is(err, engine.ErrNoServer) {
		fmt.Fprintln(env.stdout, "no server is running for this repository; nothing to stop")
		return nil
	}
	if err != nil {
		return err
	}
	live := running(servers)
	if len(live) == 0 {
		fmt.Fprintf(env.stdout, "process %d named by %s is already gone; nothing to stop\n", servers[len(servers)-1].PID, engine.PIDFileName)
		return nil
	}
	var errs []error
	for _, st := range live {
		if err := askToStop(st.PID); err != nil {
			errs = append(errs, fmt.Errorf("signal process %d: %w", st.PID, err))
		}
	}
	deadline := time.Now().Add(stopWait)
	for _, st := range live {
		for processExists(st.PID) && time.Now().Before(deadline) {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
		}
		if processExists(st.PID) {
			errs = append(errs, fmt.Errorf("server %d did not stop within %v after SIGTERM; `kill -9 %d` ends it at once", st.PID, stopWait, st.PID))
			continue
		}
		fmt.Fprintf(env.stdout, "stopped server %d\n", st.PID)
	}
	return errors.Join(errs...)
}
