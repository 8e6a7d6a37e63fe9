package engine

import (
	"context"
	"testing"

	"github.com/omnidev/omnidev/internal/capability/captest"
)

// BenchmarkReload is one full reload of a 200-doc registry (4 capabilities
// × 50 docs): load, sandbox, index update and swap. An unchanged tree is the
// common case (an editor saving without changes, a touched folder); a
// changed doc adds its reindexing.
func BenchmarkReload(b *testing.B) {
	root := b.TempDir()
	if _, err := captest.Generate(root, captest.Options{Capabilities: 4, DocsPerCap: 50}); err != nil {
		b.Fatal(err)
	}
	e, err := Open(context.Background(), root, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	for b.Loop() {
		if err := e.Reload(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}
