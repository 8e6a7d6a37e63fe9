package execute

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/omnidev/omnidev/internal/capability"
	"github.com/omnidev/omnidev/internal/sandbox"
)

// requireBun returns the path of Bun. The tests run the real runtime and CI
// installs it: its absence is a failure, never a skip.
func requireBun(tb testing.TB) string {
	tb.Helper()
	p, err := exec.LookPath("bun")
	if err != nil {
		tb.Fatalf("bun is required by these tests (npm install -g bun): %v", err)
	}
	return p
}

// prepare builds the sandbox of root with the given capabilities.
func prepare(tb testing.TB, root string, caps ...*capability.Capability) *sandbox.Sandbox {
	tb.Helper()
	sb, err := sandbox.Prepare(root, &capability.Registry{Root: root, Capabilities: caps})
	if err != nil {
		tb.Fatal(err)
	}
	return sb
}

// request returns a request for code with the defaults of these tests:
// Bun, network on, PATH passed so programs can start commands.
func request(sb *sandbox.Sandbox, code string) Request {
	return Request{
		Code:           code,
		Sandbox:        sb,
		Runtime:        "bun",
		Env:            []string{"PATH=" + os.Getenv("PATH")},
		Timeout:        20 * time.Second,
		MaxOutputBytes: 64 << 10,
		Network:        true,
	}
}
