package engine

import (
	"os"
	"testing"

	"github.com/omnidev/omnidev/internal/isolate"
)

// TestMain lets the test binary serve as the sandbox's init, as omnidev's
// own binary does for isolated runs.
func TestMain(m *testing.M) {
	if isolate.IsInit(os.Args) {
		os.Exit(isolate.Init())
	}
	os.Exit(m.Run())
}
