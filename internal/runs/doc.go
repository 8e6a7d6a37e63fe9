// Package runs keeps a record of every run - its program, exit code, time,
// and for each file it changed the state before and after - so that a run
// can be listed, shown as a diff, and undone.
//
// Records are git objects in a bare repository of omnidev's own,
// .omni/runs: one commit per run, whose tree holds run.json, program.ts
// and the blobs of the files' states. Each run's objects are one packfile
// of their own, listed with the run's commit in .omni/runs/packs (stores
// written before that also have refs/runs/<id>): three files written per
// run, and pruning a run deletes its pack. Packs are written and read
// through go-git's pack and index codecs, not its storage, which reads
// every pack's index first (pack.go says why). BenchmarkRecord: 10 dirty
// files, 100-400 runs, about 2 ms kept per run at 1k and at 50k tracked
// files, against 4.4-7 ms through go-git's storage. The user's refs,
// reflog, stash, index and `git log --all` never see them, and the store
// is self-contained: `git gc --prune=now` in the user's repository cannot
// break a kept run.
//
// What a run may change is kept at the cost of the dirty files, not of the
// repository: before the run, files that match the git index need nothing
// (their blob is in the repository's object database) and small dirty
// ones are already copied by internal/changes; only large dirty files (up
// to MaxKeptBytes) are written to the store then. After the run, the
// before-states of the files it changed are written from those, and their
// after-states read from the worktree.
//
// The store lies in the worktree, which a clone fills as its author
// likes: the user's key signs the store and each run's line of the packs
// list, and a store or line it did not sign is never read (Open).
//
// Every worktree file is written by untrusted programs: the package reads
// them without following a final symlink or blocking on FIFOs and within
// MaxKeptBytes, and undo writes only below folders that are real folders
// (never through a symlink), never into .git or .omni. Undo may run while
// a program still runs and changes the worktree: it works through folders
// opened once and checked to be the folders it checked (worktree.go).
//
// The package must never write to the user's .git, run git, or read
// omnidev's configuration: its caller gives it the root and the number
// of runs to keep.
package runs
