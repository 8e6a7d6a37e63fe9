package engine

import (
	"context"
	"fmt"

	"github.com/omnidev/omnidev/internal/capability"
	"github.com/omnidev/omnidev/internal/isolate"
)

// policy is what contains a run under the [sandbox] settings.
func policy(cfg capability.Sandbox) *isolate.Policy {
	return &isolate.Policy{
		Mode:        cfg.Isolation,
		Hosts:       cfg.NetworkHosts,
		Filesystem:  cfg.Filesystem != capability.FilesystemHost,
		Writable:    cfg.Writable,
		Readable:    cfg.Readable,
		MemoryBytes: cfg.MemoryBytes,
		Processes:   cfg.Processes,
		MemoryNotice: fmt.Sprintf("omnidev: the program was stopped by the memory limit (%s); raise [sandbox] memory in omni/config.toml",
			capability.FormatBytes(cfg.MemoryBytes)),
		ProcessesNotice: fmt.Sprintf("omnidev: the program reached the processes limit (%d processes and threads); raise [sandbox] processes in omni/config.toml",
			cfg.Processes),
	}
}

// diagnoseIsolation starts the runtime (with --version) the way a run
// starts a program and reports each protection and whether it holds on
// this machine, the runtime's folders the sandbox keeps visible, and the
// init runs start in ("" where there is none) with why it is not the helper
// beside omnidev when it is not.
func diagnoseIsolation(ctx context.Context, reg *capability.Registry, runtimePath string) ([]isolate.Protection, []string, string, string, []string) {
	env := reg.Env.Environ()
	prog := isolate.Program{
		Path:    runtimePath,
		Args:    []string{"--version"},
		Root:    reg.Root,
		Dir:     reg.Root,
		Env:     env,
		Network: reg.Sandbox.Network,
	}
	iso := isolate.New()
	pol := policy(reg.Sandbox)
	protections := iso.Check(ctx, prog, pol)
	init, problem := iso.InitPath()
	paths, _ := isolate.RuntimePaths(runtimePath, reg.Root, env)
	return protections, paths, init, problem, isolate.Refusals(prog, pol)
}
