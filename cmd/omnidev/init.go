package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/omnidev/omnidev/internal/capability"
)

func runInit(_ context.Context, env *cliEnv, args []string) error {
	fs := env.flags("init")
	project := fs.String("project", "", "project `name` written to omni/config.toml (default: the folder's name)")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	// init creates omni/, so the root is --dir or the working directory
	// itself, not a folder found by walking up.
	root := env.dir
	if root == "" {
		var err error
		if root, err = os.Getwd(); err != nil {
			return err
		}
	}
	root, err := filepath.Abs(root)
	if err != nil {
		return err
	}
	if *project == "" {
		*project = filepath.Base(root)
	}
	created, err := capability.Init(root, *project)
	if errors.Is(err, capability.ErrExists) {
		return &exitError{code: 1, err: err}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "Created in %s:\n", root)
	for _, p := range created {
		fmt.Fprintf(env.stdout, "  %s\n", p)
	}
	fmt.Fprintf(env.stdout, "\nNext: `omnidev doctor` checks the setup; `omnidev serve` starts the MCP server.\n"+
		"A capability that wraps an MCP server ([mcp]) runs its command only once you approve it: `omnidev trust`.\n")
	return nil
}
