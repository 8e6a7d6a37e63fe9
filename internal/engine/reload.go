package engine

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/omnidev/omnidev/internal/capability"
	"github.com/omnidev/omnidev/internal/watch"
)

// OnReload registers fn to be called with the new registry after each
// successful reload, once it is the engine's current one. Calls are made one
// at a time, in the order of the reloads, before Reload returns: a listener
// must not call Reload, and should be quick.
func (e *Engine) OnReload(fn func(*capability.Registry)) {
	e.listenersMu.Lock()
	defer e.listenersMu.Unlock()
	e.listeners = append(e.listeners, fn)
}

// reloaded calls the OnReload listeners; the caller holds reloadMu.
func (e *Engine) reloaded(reg *capability.Registry) {
	e.listenersMu.Lock()
	fns := e.listeners
	e.listenersMu.Unlock()
	for _, fn := range fns {
		fn(reg)
	}
}

// isReloadTrigger reports whether a changed path (relative to the root,
// with "/") affects the registry: a config file or a capabilities folder
// of any layout capability.Load reads (a layout appears when its config
// file is created), or something inside such a folder. Everything else
// under .omni/ — the PID file, the index, the sandbox, programs' state — is
// the server's own or the programs' business and must not cause a reload.
func isReloadTrigger(rel string) bool {
	if rel == "omni" {
		return true
	}
	for _, p := range capability.ReloadPaths() {
		if rel == p || strings.HasPrefix(rel, p+"/") {
			return true
		}
	}
	return false
}

// Watch watches the repository's config and capabilities and reloads the
// engine when they change. A failed reload keeps the last good state, and
// its error is logged: the log (stderr, or the server's log file) is where
// an MCP host shows a server's messages, MCP's own logging being deprecated.
//
// Reloads run on the watcher's callback goroutine, one at a time: changes
// made during a reload arrive as the next batch, so at most one reload runs
// and one more is pending.
func (e *Engine) Watch(ctx context.Context) (*watch.Watcher, error) {
	onChange := func(b watch.Batch) {
		if !b.Rescan && !anyTrigger(e.root, b.Paths) {
			return
		}
		e.logger.Debug("reloading", "paths", len(b.Paths), "rescan", b.Rescan)
		if err := e.Reload(ctx); err != nil {
			e.logger.Error("reload failed", "err", err)
		}
	}
	// The root itself is watched for OmniDev's omni.toml, without the
	// folders beside omni/ and .omni/: the rest of the repository never
	// changes the registry.
	return watch.New(watch.Options{
		Roots: []string{e.root},
		Skip: func(path string, isDir bool) bool {
			if !isDir || filepath.Dir(path) != e.root {
				return false
			}
			base := filepath.Base(path)
			return base != "omni" && base != ".omni"
		},
		Logger: e.logger,
	}, onChange)
}

func anyTrigger(root string, paths []string) bool {
	for _, p := range paths {
		rel, err := filepath.Rel(root, p)
		if err == nil && isReloadTrigger(filepath.ToSlash(rel)) {
			return true
		}
	}
	return false
}
