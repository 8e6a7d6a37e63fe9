package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/omnidev/omnidev/internal/capability"
	"github.com/omnidev/omnidev/internal/query"
)

func runQuery(ctx context.Context, env *cliEnv, args []string) error {
	fs := env.flags("query")
	limit := fs.Int("limit", 10, "most results to show, 1 to 100")
	types := fs.Bool("types", false, "also print the TypeScript declarations of what is found; with a capability's id or module as the only word, all of its declarations")
	kinds := fs.String("kinds", "", "comma-separated kinds to show: capability, skill, doc, rule, tool")
	asJSON := fs.Bool("json", false, "print the omni_query tool's JSON result")
	words, err := parse(fs, args)
	if err != nil {
		return err
	}
	req := query.Request{Query: strings.Join(words, " "), Limit: *limit, IncludeTypes: *types}
	if *kinds != "" {
		req.Kinds = strings.Split(*kinds, ",")
	}
	eng, err := env.openEngine(ctx)
	if err != nil {
		return err
	}
	defer eng.Close()
	eng.StartServers(ctx) // a server lists wrapped servers' tools too
	res, err := eng.Query(ctx, req)
	if err != nil {
		return err
	}
	if *types {
		wholeTypes(res, eng.Registry(), req.Query)
	}
	printWarnings(env.stderr, res.Warnings)
	if *asJSON {
		return env.printJSON(res)
	}
	printQueryResult(env.stdout, res)
	return nil
}

// wholeTypes puts in res all the type definitions of the capability whose
// id or module is the query, when one is: `omnidev query --types zones`
// prints the whole module's, however large, as the omni://zones/types.d.ts
// resource does.
func wholeTypes(res *query.Result, reg *capability.Registry, q string) {
	q = strings.TrimSpace(q)
	for _, c := range reg.Capabilities {
		if q == "" || (q != c.ID && q != c.Module) {
			continue
		}
		res.TypeDefinitions = query.TypeDefinitions([]*capability.Capability{c})
		for i := range res.Summary {
			if res.Summary[i].ID == c.ID {
				res.Summary[i].TypesNote = ""
			}
		}
		return
	}
}

func printQueryResult(w io.Writer, res *query.Result) {
	for _, h := range res.Results {
		fmt.Fprintf(w, "%s  %s  (score %.3g)\n", h.Source, h.Title, h.Score)
		if h.Snippet != "" {
			fmt.Fprintf(w, "    %s\n", h.Snippet)
		}
		if len(h.Matched) > 0 {
			fmt.Fprintf(w, "    matched: %s\n", strings.Join(h.Matched, ", "))
		}
	}
	if len(res.Results) > 0 {
		fmt.Fprintf(w, "\n%d of %d results\n", len(res.Results), res.Total)
	}
	if len(res.Summary) > 0 {
		fmt.Fprintln(w, "Capabilities:")
		for _, c := range res.Summary {
			fmt.Fprintf(w, "  %-16s import from %q: %s\n", c.ID, c.Module, c.Description)
			if c.Tools != nil {
				fmt.Fprintf(w, "    MCP server: %s\n", plural(*c.Tools, "tool"))
			}
			if c.Error != "" {
				fmt.Fprintf(w, "    unavailable: %s\n", c.Error)
			}
			if c.TypesNote != "" {
				fmt.Fprintf(w, "    types %s\n", c.TypesNote)
			}
			if c.NoTypes {
				fmt.Fprintln(w, "    no type definitions (types.d.ts)")
			}
			for _, s := range c.Skills {
				fmt.Fprintf(w, "    skill %s\n", s)
			}
			for _, r := range c.Rules {
				fmt.Fprintf(w, "    rule  %s\n", r)
			}
		}
	}
	if res.TypeDefinitions != "" {
		fmt.Fprintf(w, "\n%s\n", res.TypeDefinitions)
	}
	if len(res.Results) == 0 && len(res.Summary) == 0 {
		fmt.Fprintln(w, "no results; `omnidev query` with no words lists every capability")
	}
}
