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
// What a run changed is measured against each file's content just before
// the run (changes.go): a walk before and after, the git index standing in
// for the content of clean files and copies for the rest, so edits already
// in the worktree never count and new untracked files do. .git, .omni and
// ignored files are never reported. The first walk runs while the runtime
// boots: the sandbox's runner holds the program at a gate (a byte on stdin)
// until the walk is done, so the program cannot change a file under it.
//
// The baseline then outlives the run (tracker.go). It is built in the
// background - when the Executor is warmed (Warm: the engine does it when
// it opens), else after its first run - by a walk that watches every
// folder it enters with inotify; a run that comes before it is ready
// waits for it. The events waiting since the last run are folded into the
// baseline before the gate opens (so changes made between runs are never
// the next run's), and after the program exits the events it raised name
// the only paths to compare. A run then costs what it changed, not what
// the repository holds. When events cannot tell (queue overflow, ignore
// rules or the tracked set of ignored folders changed) the run is checked
// by a full walk against the same baseline and the baseline is rebuilt in
// the background; when the tracker fails (inotify unavailable), runs walk
// for a while before it is tried again.
//
// The git index is decoded here (gitindex.go) rather than by go-git,
// whose decoder refuses split and sparse indexes and cost ~100 ms at 50k
// tracked files - paid by every run after `git status` rewrote the index.
// Here a rewrite that keeps every entry's name and place is found by
// comparing the new file, mapped, with the last one and costs ~0.4 ms at
// 50k; a full decode ~10 ms (BenchmarkIndexRead). Its test checks every kind of index
// git writes against `git ls-files`, which reads what is not decoded here.
//
// The package must never read configuration (its caller resolves runtime,
// environment and limits), never run a program with network access it was
// asked to deny, never compute a full `git status` (go-git's is several
// times slower than git's on big repositories), and never write to .git.
package execute
