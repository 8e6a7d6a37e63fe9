//go:build linux

package execute

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

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
