package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/omnidev/omnidev/internal/capability"
	"github.com/omnidev/omnidev/internal/engine"
	"github.com/omnidev/omnidev/internal/isolate"
)

func runDoctor(ctx context.Context, env *cliEnv, args []string) error {
	if _, err := parse(env.flags("doctor"), args); err != nil {
		return err
	}
	root, err := env.root()
	if err != nil {
		return err
	}
	d := engine.Diagnose(ctx, root, env.environ, newRelay)
	printDiagnosis(env.stdout, d)
	if !d.OK() {
		return &exitError{code: 1}
	}
	return nil
}

func printDiagnosis(w io.Writer, d *engine.Diagnosis) {
	fmt.Fprintf(w, "repository:   %s\n", d.Root)
	fmt.Fprintf(w, "git:          %s\n", d.Git)
	fmt.Fprintf(w, "server:       %s\n", d.Server)
	if d.ConfigErr != nil {
		fmt.Fprintf(w, "config:       ERROR %v\n", d.ConfigErr)
	} else {
		reg := d.Registry
		layout := ""
		if reg.Layout.OmniDev() {
			layout = " (OmniDev's layout)"
		}
		fmt.Fprintf(w, "config:       %s%s\n", strings.Join(d.Files, ", "), layout)
		fmt.Fprintf(w, "profile:      %s (defined: %s)\n", reg.Profile, strings.Join(reg.Profiles, ", "))
		fmt.Fprintf(w, "capabilities: %d enabled, in %s/\n", len(reg.Capabilities), reg.Layout.CapabilitiesDir)
		for _, c := range reg.Capabilities {
			fmt.Fprintf(w, "  %-16s module %-14q %s, %s, %s\n", c.ID, c.Module,
				plural(len(c.Skills), "skill"), plural(len(c.Docs), "doc"), plural(len(c.Rules), "rule"))
		}
		for _, c := range reg.Unavailable {
			fmt.Fprintf(w, "  %-16s module %-14q unavailable: its import fails until the problem below is fixed\n", c.ID, c.Module)
		}
		if len(d.Wrapped) > 0 {
			fmt.Fprintf(w, "MCP servers:  %d wrapped\n", len(d.Wrapped))
		}
		for _, s := range d.Wrapped {
			if s.Err != nil {
				fmt.Fprintf(w, "  %-16s %s: ERROR %v\n", s.Capability, s.Target, s.Err)
			} else {
				fmt.Fprintf(w, "  %-16s %s: started, %s\n", s.Capability, s.Target, plural(s.Tools, "tool"))
			}
		}
		if len(reg.NotEnabled) > 0 {
			fmt.Fprintf(w, "not enabled:  %s that profile %s does not enable\n", plural(len(reg.NotEnabled), "capability folder"), reg.Profile)
			for _, id := range reg.NotEnabled {
				fmt.Fprintf(w, "  %-16s to enable it, %s\n", id, engine.EnableHint(reg, id))
			}
		}
		printProblems(w, "problems:", reg.Problems)
		if len(reg.Warnings) > 0 {
			printProblems(w, "warnings:", reg.Warnings)
		}
	}
	if rt := d.Runtime; rt.Err != nil {
		fmt.Fprintf(w, "runtime:      ERROR %v\n", rt.Err)
		if rt.Install != "" {
			fmt.Fprintf(w, "  for you:    %s\n", rt.Install)
		}
	} else if rt.Path != "" {
		fmt.Fprintf(w, "runtime:      %s %s (%s)\n", rt.Name, rt.Version, rt.Path)
	}
	if len(d.Protections) > 0 {
		fmt.Fprintln(w, "sandbox:")
		for _, p := range d.Protections {
			fmt.Fprintf(w, "  %-16s %-13s %s\n", p.Name, p.State, p.Detail)
		}
		fmt.Fprintf(w, "  runtime paths    read-only     %s\n", strings.Join(d.RuntimePaths, ", "))
		switch {
		case strings.HasSuffix(d.Init, "/"+isolate.HelperName):
			fmt.Fprintf(w, "  init             %s\n", d.Init)
		case d.InitProblem != "":
			fmt.Fprintf(w, "  init             omnidev itself: %s (`just build` does)\n", d.InitProblem)
		case d.Init != "":
			fmt.Fprintf(w, "  init             omnidev itself; install %s beside it for faster runs (`just build` does)\n", isolate.HelperName)
		}
	}
	switch {
	case d.OK():
		fmt.Fprintln(w, "\nok: `omnidev serve` can serve this repository")
	case d.CanServe():
		fmt.Fprintln(w, "\nproblems: `omnidev serve` can serve this repository, but fix the problems above (doctor exits 1 until then)")
	default:
		fmt.Fprintln(w, "\nnot ready: fix the errors above, then run `omnidev doctor` again")
	}
}

func printProblems(w io.Writer, title string, problems []capability.Problem) {
	if len(problems) == 0 {
		fmt.Fprintf(w, "%-13s none\n", title)
		return
	}
	fmt.Fprintf(w, "%-13s %d\n", title, len(problems))
	for _, p := range problems {
		fmt.Fprintf(w, "  - %s\n", p)
	}
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
