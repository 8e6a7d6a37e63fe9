package server

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/omnidev/omnidev/internal/engine"
	"github.com/omnidev/omnidev/internal/query"
)

type queryParams struct {
	Query        string   `json:"query,omitempty" jsonschema:"Words to search for in the capabilities' names, docs, skills and rules; typos and word forms still match, quote a phrase to match it exactly. Leave empty for a summary of every enabled capability with its TypeScript type definitions."`
	Limit        *int     `json:"limit,omitempty" jsonschema:"How many results to return at most, from 1 to 100 (default 10)."`
	IncludeTypes bool     `json:"include_types,omitempty" jsonschema:"Also return the TypeScript declarations (declare module blocks) of the capabilities found."`
	Kinds        []string `json:"kinds,omitempty" jsonschema:"Return only these kinds of result: capability, skill, doc, rule, tool (default: all)."`
}

const defaultQueryLimit = 10

func addQueryTool(s *mcp.Server, e *engine.Engine) error {
	in, err := jsonschema.For[queryParams](nil)
	if err != nil {
		return fmt.Errorf("omni_query input schema: %w", err)
	}
	in.Properties["limit"].Types, in.Properties["limit"].Type = nil, "integer"
	in.Properties["limit"].Default = json.RawMessage(fmt.Sprint(defaultQueryLimit))
	// Bounds and the valid kinds are checked by the handler rather than the
	// schema, so that a mistake gets our JSON error naming the bound or the
	// valid values, not the SDK's validator text.
	in.Properties["kinds"].Types, in.Properties["kinds"].Type = nil, "array"
	out, err := outputSchema[query.Result]()
	if err != nil {
		return fmt.Errorf("omni_query output schema: %w", err)
	}
	addTool(s, &mcp.Tool{
		Name: "omni_query",
		Description: "Search the repository's capability modules: their descriptions, docs, skills and rules. " +
			"Returns ranked results with a source tag (capability:<id>, skill:<id>/<name>, doc:<id>/<name>, rule:<id>/<name>), " +
			"a title, a snippet with matched terms in **bold**, and a score. An empty query returns a summary of every enabled " +
			"capability and its TypeScript type definitions: start there, then write a program for omni_execute.",
		InputSchema:  in,
		OutputSchema: out,
		Annotations: &mcp.ToolAnnotations{
			Title:          "Search capabilities",
			ReadOnlyHint:   true,
			IdempotentHint: true,
			OpenWorldHint:  boolPtr(false),
		},
	}, e.Logger(), func(ctx context.Context, _ *mcp.CallToolRequest, p queryParams) (any, error) {
		req := query.Request{Query: p.Query, Limit: defaultQueryLimit, IncludeTypes: p.IncludeTypes, Kinds: p.Kinds}
		if p.Limit != nil {
			if *p.Limit < 1 || *p.Limit > 100 {
				return nil, fmt.Errorf("limit must be between 1 and 100, got %d", *p.Limit)
			}
			req.Limit = *p.Limit
		}
		return e.Query(ctx, req)
	})
	return nil
}
