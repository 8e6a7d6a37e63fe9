package engine

import (
	"os"
	"testing"

	"github.com/omnidev/omnidev/internal/isolate"
	"github.com/omnidev/omnidev/internal/trust"
)

// TestMain lets the test binary serve as the sandbox's init, as omnidev's
// own binary does for isolated runs.
func TestMain(m *testing.M) {
	// The tests approve the MCP servers they wrap by construction; the
	// tests of approval itself clear this for the servers they start.
	os.Setenv(trust.AllEnv, "1")
	os.Exit(isolate.InitOr(func() int {
		// The key that signs run records goes in a config folder of the
		// tests' own, not the user's.
		cfg, err := os.MkdirTemp("", "omnidev-config-*")
		if err != nil {
			panic(err)
		}
		defer os.RemoveAll(cfg)
		os.Setenv("XDG_CONFIG_HOME", cfg)
		return m.Run()
	}))
}
