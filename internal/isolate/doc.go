// Package isolate contains one run of a program: on Linux, namespaces that
// omnidev sets up itself (user, mount, PID, IPC, UTS, and network when it is
// off), a filesystem view in which only the worktree and the paths the user
// allowed are writable, and cgroup limits on memory and processes; on other
// systems, a process group (on Windows a job object, which kills what the
// program started with it) and a report saying what is not enforced.
//
// The program is started through an init, the namespaces' first process:
// cmd/omnidev-sandbox when it is installed beside the running binary, else
// that binary re-executed (both call Init when their first argument is
// InitArg). The init mounts the view, drops every capability, starts the
// runtime, reaps orphans and exits with the runtime's status; when it exits
// the kernel kills whatever else is left in the PID namespace, so nothing a
// program starts (setsid, detached or double-forked) outlives its run, and
// it dies with the server (a parent-death signal).
//
// The package decides nothing about configuration: its caller passes a
// Policy. It must never run a program with network access it was asked to
// deny, never leave a process behind, and never report a protection as
// enforced that it could not set up.
package isolate
