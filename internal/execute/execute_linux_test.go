//go:build linux

package execute

import (
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/omnidev/omnidev/internal/changes"
	"github.com/omnidev/omnidev/internal/testrepo"
)

// TestRunTracked goes through the real runtime: a warmed Executor's runs
// take their changes from the baseline kept between runs (the program is
// held at the gate until it is current), and after Close from walks, as
// exact. internal/changes tests the baseline itself.
func TestRunTracked(t *testing.T) {
	requireBun(t)
	root := testrepo.New(t, map[string]string{"a.txt": "1\n"})
	var log testrepo.Buffer
	e := New(root, slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug})))
	e.Warm()
	sb := prepare(t, root)
	edit := `import { appendFileSync } from "node:fs"; appendFileSync("a.txt", "more\n");`
	want := []changes.Change{{Path: "a.txt", Status: changes.StatusModified, Insertions: 1}}
	for _, closed := range []bool{false, true} {
		if closed {
			if err := e.Close(); err != nil {
				t.Fatal(err)
			}
		}
		res, err := e.Run(t.Context(), request(sb, edit))
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("run: %v %+v", err, res)
		}
		if len(res.Changes) == 1 {
			res.Changes[0].Prior = nil // internal/runs' business, tested there
		}
		if len(res.Changes) != 1 || res.Changes[0] != want[0] {
			t.Errorf("closed=%v: changes %+v, want %+v", closed, res.Changes, want)
		}
	}
	// One "run finished" line each, in order.
	if got := strings.Count(log.String(), "tracked=true"); got != 1 || !strings.Contains(log.String(), "tracked=false") {
		t.Errorf("want the first run tracked and the one after Close not:\n%s", log.String())
	}
}

// refusedChildEnv marks the re-executed test binary of
// TestRunNetworkIsolationRefused.
const refusedChildEnv = "OMNIDEV_TEST_NO_USERNS_CHILD"

// TestRunNetworkIsolationRefused checks that a program that must not have
// network never runs with it: where the kernel refuses the namespaces, Run
// fails with ErrNetworkIsolation. The test re-executes itself in a user
// namespace whose user-namespace quota is zero, a kernel that refuses.
func TestRunNetworkIsolationRefused(t *testing.T) {
	requireBun(t)
	check := func() {
		root := t.TempDir()
		req := request(prepare(t, root), "console.log(\"ran\")\n")
		req.Network = false
		res, err := New(root, nil).Run(t.Context(), req)
		if !errors.Is(err, ErrNetworkIsolation) || !strings.Contains(err.Error(), "network = true") {
			t.Fatalf("Run() = %+v, %v; want ErrNetworkIsolation saying what to do", res, err)
		}
	}
	if os.Getenv(refusedChildEnv) != "" {
		if err := os.WriteFile("/proc/sys/user/max_user_namespaces", []byte("0"), 0); err != nil {
			t.Fatalf("forbid user namespaces: %v", err)
		}
		check()
		return
	}
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestRunNetworkIsolationRefused$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), refusedChildEnv+"=1")
	// Root of its own user namespace, the child may lower that namespace's quota.
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
	}
	out, err := cmd.CombinedOutput()
	if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EINVAL) {
		// This kernel refuses user namespaces already: check it here.
		check()
		return
	}
	if err != nil || !strings.Contains(string(out), "--- PASS: TestRunNetworkIsolationRefused") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}
