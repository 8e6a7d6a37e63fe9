package server_test

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/omnidev/omnidev/internal/testrepo"
)

// TestServeOnATerminal starts `omnidev serve` with a terminal as stdin, as
// someone trying it by hand would: it says on stderr what it is and how to
// try it, and still serves. The Inspector commands it prints name the
// binary by its absolute path, which works when omnidev is not on PATH
// (bin/omnidev after `just build`); `just smoke` runs them as printed.
func TestServeOnATerminal(t *testing.T) {
	root := fixtureRepo(t)
	ptmx, tty := openPTY(t)
	defer ptmx.Close()
	stderr := new(testrepo.Buffer)
	cmd := exec.Command(binary, "serve")
	cmd.Dir, cmd.Stdin, cmd.Stderr = root, tty, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	testrepo.WaitFor(t, "the terminal notice", 10*time.Second, func() bool { return strings.Contains(stderr.String(), "server started") })
	for _, want := range []string{
		"MCP server over stdio",
		"npx @modelcontextprotocol/inspector " + binary + " serve --dir " + root + "\n",
		"npx @modelcontextprotocol/inspector --cli " + binary + " serve --dir " + root + " --method tools/list\n",
	} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	// What the Inspector would start, started from elsewhere with no
	// omnidev on PATH.
	_, printed, _ := strings.Cut(stderr.String(), "--cli ")
	printed, _, _ = strings.Cut(printed, " serve ")
	version := exec.Command(printed, "version")
	version.Dir, version.Env = t.TempDir(), []string{"PATH=/nonexistent"}
	if out, err := version.CombinedOutput(); err != nil || !strings.HasPrefix(string(out), "omnidev ") {
		t.Errorf("the printed program %q does not run without omnidev on PATH: %v\n%s", printed, err, out)
	}
}

// openPTY opens a pseudo-terminal pair: its controlling side and the
// terminal a process gets as stdin.
func openPTY(t *testing.T) (ptmx, tty *os.File) {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err == nil {
		err = unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0)
	}
	if err == nil {
		tty, err = os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	}
	if err != nil {
		ptmx.Close()
		t.Fatalf("open a pseudo-terminal: %v", err)
	}
	return ptmx, tty
}
