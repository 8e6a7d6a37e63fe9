package execute

import (
	"os"
	"testing"

	"github.com/omnidev/omnidev/internal/isolate"
)

// TestMain lets the test binary serve as the sandbox's init, as omnidev's
// own binary does for isolated runs.
func TestMain(m *testing.M) {
	os.Exit(isolate.InitOr(m.Run))
}
