package engine

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/omnidev/omnidev/internal/watch"
)

// isReloadTrigger reports whether a changed path (relative to the root,
// with "/") affects the registry. Everything else under .omni/ — the PID
// file, the index, the sandbox, programs' state — is the server's own or the
// programs' business and must not cause a reload.
func isReloadTrigger(rel string) bool {
	switch rel {
	case "omni", "omni/config.toml", "omni/capabilities",
		".omni/config.local.toml", ".omni/active-profile", ".omni/.env":
		return true
	}
	return strings.HasPrefix(rel, "omni/capabilities/")
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
	return watch.New(watch.Options{
		Roots:  []string{filepath.Join(e.root, "omni"), filepath.Join(e.root, ".omni")},
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
