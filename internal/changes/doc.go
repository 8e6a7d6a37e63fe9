// Package changes finds what a run changed in a repository's worktree:
// which files it added, modified or deleted, with line counts as `git diff
// --numstat` gives them. internal/execute asks it, around each program it
// runs; nothing here runs a program.
//
// What a run changed is measured against each file's content just before
// the run (Recorder.Before, changes.go): a walk before and after, the git
// index standing in for the content of clean files and copies for the
// rest, so edits already in the worktree never count and new untracked
// files do. .git, .omni and ignored files are never reported.
//
// The baseline then outlives the run (tracker.go). It is built in the
// background - when the Recorder is warmed (Warm: the engine has the
// executor do it when it opens), else after its first run - by a walk that
// watches every folder it enters with inotify; a run that comes before it
// is ready waits for it. The events waiting since the last run are folded
// into the baseline by Before (so changes made between runs are never the
// next run's), and after the program exits the events it raised name the
// only paths to compare. A run then costs what it changed, not what the
// repository holds. When events cannot tell (queue overflow, ignore rules
// or the tracked set of ignored folders changed) the run is checked by a
// full walk against the same baseline and the baseline is rebuilt in the
// background; when the tracker fails (inotify unavailable, as on systems
// other than Linux), runs walk, and the tracker is tried again later.
//
// One layer here is our own over a library's: the git index is decoded by
// gitindex.go rather than by go-git, for two reasons. go-git's decoder
// refuses split and sparse indexes (TestGoGitIndexDecoder fails the day it
// reads them), and it is slow where it matters: git rewrites the index on
// every `git status`, and the next run must read it again. At 50k
// entries, BenchmarkIndexRead reads an index that `git status` rewrote in
// 0.40 ms here (the rewrite is found by comparing the new file, mapped,
// with the last one), decodes a whole one in 5.2 ms, and go-git decodes it
// in 57 ms: 140 times the cost on the path of every run after git touched
// the index (2-core machine at load 6.7, 2026-11-25; the README's table of
// 2026-11-24 had 0.53 / 9.3 / 100 ms).
// TestIndexReader checks every kind of index git writes against `git
// ls-files`, which reads what is not decoded here.
//
// The package must never write to the worktree or to .git, never run a
// program, never compute a full `git status` (go-git's is several times
// slower than git's on big repositories), and never read omnidev's
// configuration: its caller gives it the root.
package changes
