// Package watch reports which files changed under a set of directory trees,
// in debounced batches, on top of fsnotify.
//
// The server uses it to reload when capabilities or config change; it is kept
// general (exact paths, plus an explicit "events were lost" signal) so that
// other consumers, such as collecting what a program changed while it ran,
// can rely on it too.
//
// fsnotify is not recursive on Linux, so the package keeps one watch per
// directory and closes the gaps that leaves:
//
//   - a directory is watched before it is listed, and a new directory's
//     contents are reported as changed, so `mkdir -p a/b && touch a/b/f`
//     is not missed although a/b/f was written before a/b had a watch;
//   - single files are seen through their folder, so a rename-on-save
//     (write a temporary file, rename it over the original) is reported;
//   - a root that does not exist yet is waited for on its nearest existing
//     ancestor and watched as soon as it appears;
//   - a directory renamed or removed loses its watches, including those of
//     its subdirectories, which inotify would otherwise keep reporting
//     under their old names.
//
// What the package must never do:
//
//   - Stop silently. When events may have been lost (kernel queue overflow,
//     the inotify watch limit) it logs a warning, watches everything again
//     and delivers a Batch with Rescan set, telling the consumer to treat
//     everything as changed. While some directory cannot be watched, every
//     Batch carries Rescan and the watches are retried.
//   - Let a slow callback hold up the reading of events. Events are read and
//     handled on goroutines of their own; changes that arrive while the
//     callback runs accumulate and come in the next Batch. Only Close waits
//     for a callback that is running.
//   - Leak goroutines. Close stops every goroutine the Watcher started and
//     returns only when they have exited; after that the callback is never
//     called again.
package watch
