// Package execute runs one TypeScript program with an external runtime (Bun,
// Deno, Node with tsx, or an explicit command) from a repository's root, and
// reports its exit code, its output and exactly what it changed in the
// worktree.
//
// A run is contained: the program gets only the environment it is given,
// and starts through internal/isolate under the Request's isolation policy
// (namespaces, a filesystem view, cgroup limits; nil: a process group on
// the host). On exit, timeout or cancellation everything it started is
// killed, so nothing keeps running. Output is capped per stream, keeping
// head and tail, in bounded memory. Runs in one repository
// are serialized, across processes too (runlock.go): they share main.ts and
// the worktree.
//
// What a run changed is internal/changes's to find (a Recorder per
// Executor): the program starts held at a gate (the run folder's runner
// waits for a byte on stdin) while the recorder brings its record of the
// worktree up to date, so the program cannot change a file under it, and
// once the program has exited the recorder says what changed.
//
// The package must never read configuration (its caller resolves runtime,
// environment and limits), never run a program with network access it was
// asked to deny, and never leave a process it started running.
package execute
