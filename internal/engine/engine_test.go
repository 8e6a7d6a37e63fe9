package engine

import (
	"context"
	"os"
	"testing"

	"github.com/omnidev/omnidev/internal/testrepo"
)

// newTestEngine opens an engine on a copy of this repository's omni/.
func newTestEngine(t testing.TB) *Engine {
	t.Helper()
	e, err := Open(context.Background(), testrepo.CopyOmni(t), Options{Environ: os.Environ()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}
