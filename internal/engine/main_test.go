package engine

import (
	"os"
	"testing"

	"github.com/omnidev/omnidev/internal/isolate"
	"github.com/omnidev/omnidev/internal/testrepo"
	"github.com/omnidev/omnidev/internal/trust"
)

// TestMain lets the test binary serve as the sandbox's init, as omnidev's
// own binary does for isolated runs.
func TestMain(m *testing.M) {
	// The tests approve the MCP servers they wrap by construction; the
	// tests of approval itself clear this for the servers they start.
	os.Setenv(trust.AllEnv, "1")
	os.Exit(isolate.InitOr(func() int {
		defer testrepo.PrivateConfig()()
		return m.Run()
	}))
}
