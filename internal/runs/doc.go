// Package runs keeps a record of every run - its program, exit code, time,
// and for each file it changed the state before and after - so that a run
// can be listed, shown as a diff, and undone.
//
// Records are git objects in a bare repository of omnidev's own,
// .omni/runs: one commit per run under refs/runs/<id>, whose tree holds
// run.json, program.ts and the blobs of the files' states. Each run's
// objects are one packfile of their own (listed in .omni/runs/packs), not
// loose objects: two or three files written per run instead of one per
// object, and pruning a run deletes its pack without a walk over the
// store. BenchmarkRecord: 10 dirty files in 1k tracked files, 400 runs,
// about 4.4 ms kept per run with packs against 6.9 ms (100 runs) to 12 ms
// (400 runs, pruning included) with loose objects. The user's
// refs, reflog, stash, index and `git log --all` never see them, and the
// store is self-contained: `git gc --prune=now` in the user's repository
// cannot break a kept run.
//
// What a run may change is kept at the cost of the dirty files, not of the
// repository: before the run, files that match the git index need nothing
// (their blob is in the repository's object database) and small dirty
// ones are already copied by internal/changes; only large dirty files (up
// to MaxKeptBytes) are written to the store then. After the run, the
// before-states of the files it changed are written from those, and their
// after-states read from the worktree.
//
// Every worktree file is written by untrusted programs: the package reads
// them without following a final symlink or blocking on FIFOs and within
// MaxKeptBytes, and undo writes only below folders that are real folders
// (never through a symlink), never into .git or .omni.
//
// The package must never write to the user's .git, run git, or read
// omnidev's configuration: its caller gives it the root and the number
// of runs to keep.
package runs
