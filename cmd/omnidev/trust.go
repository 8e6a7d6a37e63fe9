package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/omnidev/omnidev/internal/engine"
	"github.com/omnidev/omnidev/internal/trust"
)

// runTrust shows the MCP servers this repository's capabilities wrap and
// records the user's approval of their definitions, outside the repository.
func runTrust(_ context.Context, env *cliEnv, args []string) error {
	fs := env.flags("trust")
	yes := fs.Bool("yes", false, "approve every definition shown without asking")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	root, err := env.root()
	if err != nil {
		return err
	}
	defs, approved, err := engine.Pending(root, env.environ)
	if err != nil {
		return err
	}
	if len(defs) == 0 {
		fmt.Fprintf(env.stdout, "no capability of %s wraps an MCP server: nothing to approve\n", root)
		return nil
	}
	ids := slices.Sorted(func(yield func(string) bool) {
		for id := range defs {
			if !yield(id) {
				return
			}
		}
	})
	var pending []string
	fmt.Fprintf(env.stdout, "The MCP servers of %s run on this machine, outside the sandbox, with your rights.\n", root)
	fmt.Fprintln(env.stdout, "A program can call their tools: approve only commands you would run yourself.")
	for _, id := range ids {
		state := "approved"
		if !approved[id] {
			state = "NOT approved"
			pending = append(pending, id)
		}
		fmt.Fprintf(env.stdout, "\ncapability %s (%s):\n%s\n", id, state, indent(defs[id]))
	}
	if len(pending) == 0 {
		fmt.Fprintf(env.stdout, "\nall %d definitions are approved\n", len(defs))
		return nil
	}
	if !*yes {
		f, ok := env.stdin.(*os.File)
		if !ok || !isTerminal(f) {
			return &exitError{code: 1, err: fmt.Errorf("%d definitions are not approved (%s); run `omnidev trust --yes` to approve them", len(pending), strings.Join(pending, ", "))}
		}
		fmt.Fprintf(env.stdout, "\nApprove %s? [y/N] ", strings.Join(pending, ", "))
		line, _ := bufio.NewReader(env.stdin).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
			return &exitError{code: 1, err: fmt.Errorf("nothing approved")}
		}
	}
	approve := map[string]string{}
	for _, id := range pending {
		approve[id] = defs[id]
	}
	store := trust.Open(env.environ)
	if err := store.Approve(root, approve); err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "approved %s (kept in %s); restart a server that is running to start them\n", strings.Join(pending, ", "), store.Path)
	return nil
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(s, "\n", "\n  ")
}
