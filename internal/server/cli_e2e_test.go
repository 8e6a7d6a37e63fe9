package server_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/omnidev/omnidev/internal/testrepo"
)

// TestEndToEndExecInterrupted: SIGINT (Ctrl-C) on `omnidev exec` stops the
// run, says it was interrupted and exits 130, not 124 as a timeout does.
func TestEndToEndExecInterrupted(t *testing.T) {
	root := fixtureRepo(t)
	writeFile(t, root, "progs/hang.ts", `import { writeFileSync } from "node:fs";
writeFileSync(".omni/state/started", "1");
await new Promise(() => {});
`)
	cmd := exec.Command(binary, "exec", "progs/hang.ts")
	cmd.Dir = root
	var stderr testrepo.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	testrepo.WaitFor(t, "the program to start", 20*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(root, ".omni", "state", "started"))
		return err == nil
	})
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Errorf("exit: %v; want status 130", err)
	}
	if !strings.Contains(stderr.String(), "interrupted") || strings.Contains(stderr.String(), "timed out") {
		t.Errorf("stderr does not say the run was interrupted:\n%s", stderr.String())
	}
}

// TestEndToEndUnclosedQuote: a string left open in the config is reported
// at its opening quote, not at the end of the line.
func TestEndToEndUnclosedQuote(t *testing.T) {
	root := fixtureRepo(t)
	writeFile(t, root, "omni/config.toml", "project = \"demo\n\n[capabilities]\nenable = [\"tasks\"]\n")
	out, err := exec.Command(binary, "--dir", root, "query", "task").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "omni/config.toml:1:11: this string is not closed") {
		t.Errorf("omnidev query: %v\n%s", err, out)
	}
}
