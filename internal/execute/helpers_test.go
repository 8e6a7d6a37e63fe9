package execute

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/omnidev/omnidev/internal/capability"
	"github.com/omnidev/omnidev/internal/runfolder"
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

// prepare builds the run folder of root with the given capabilities.
func prepare(tb testing.TB, root string, caps ...*capability.Capability) *runfolder.Folder {
	tb.Helper()
	sb, err := runfolder.Prepare(root, &capability.Registry{Root: root, Capabilities: caps})
	if err != nil {
		tb.Fatal(err)
	}
	return sb
}

// request returns a request for code with the defaults of these tests:
// Bun, network on, PATH passed so programs can start commands.
func request(sb *runfolder.Folder, code string) Request {
	return Request{
		Code:           code,
		Folder:         sb,
		Runtime:        "bun",
		Env:            []string{"PATH=" + os.Getenv("PATH")},
		Timeout:        20 * time.Second,
		MaxOutputBytes: 64 << 10,
		Network:        true,
	}
}
