package main

import (
	"runtime/debug"
	"sync"
)

// indexBuildGCPercent is the garbage collector's target (GOGC) while the
// query index is built from nothing. A build allocates mostly short-lived
// analysis garbage beside bleve's interim segment, which dominates the
// peak: a higher target trades a little peak memory for a faster build
// (BenchmarkBuild in internal/query measures both).
const indexBuildGCPercent = 400

// indexBuildFreeDocs is how many documents a build indexes before its
// garbage is returned to the system when it ends: the runtime would
// otherwise keep it resident for minutes, until its scavenger returns it.
// Below that, a forced collection costs more than it returns.
const indexBuildFreeDocs = 250

// indexBuildMemory is omnidev's memory policy while query indexes are built
// from nothing: process-wide settings, so they are the process's to set,
// not the library's (query.Options.OnBuild calls enter). It raises the
// collector's target while any build runs and puts the process's own
// setting back when the last one ends; a setting at or above
// indexBuildGCPercent, or GOGC=off, is left as it is.
type indexBuildMemory struct {
	mu     sync.Mutex
	builds int
	old    int
}

// enter raises the target, and returns the function that ends the raise
// and, after a big build, returns its garbage to the system.
func (m *indexBuildMemory) enter() (end func(docs int)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.builds == 0 {
		if m.old = debug.SetGCPercent(indexBuildGCPercent); m.old < 0 || m.old >= indexBuildGCPercent {
			debug.SetGCPercent(m.old)
		}
	}
	m.builds++
	return func(docs int) {
		m.mu.Lock()
		if m.builds--; m.builds == 0 {
			debug.SetGCPercent(m.old)
		}
		m.mu.Unlock()
		if docs >= indexBuildFreeDocs {
			debug.FreeOSMemory()
		}
	}
}
