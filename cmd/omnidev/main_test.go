package main

import (
	"os"
	"testing"

	"github.com/omnidev/omnidev/internal/isolate"
)

// TestMain lets the test binary serve as the sandbox's init, as main does:
// the commands run in-process here start isolated programs.
func TestMain(m *testing.M) {
	os.Exit(isolate.InitOr(m.Run))
}
