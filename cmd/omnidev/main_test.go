package main

import (
	"os"
	"testing"

	"github.com/omnidev/omnidev/internal/isolate"
	"github.com/omnidev/omnidev/internal/testrepo"
	"github.com/omnidev/omnidev/internal/trust"
)

// TestMain lets the test binary serve as the sandbox's init, as main does:
// the commands run in-process here start isolated programs.
func TestMain(m *testing.M) {
	// The tests approve the MCP servers they wrap by construction; the
	// tests of approval itself clear this for the servers they start.
	os.Setenv(trust.AllEnv, "1")
	os.Exit(isolate.InitOr(func() int {
		defer testrepo.PrivateConfig()()
		return m.Run()
	}))
}
