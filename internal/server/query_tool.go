package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/omnidev/omnidev/internal/engine"
	"github.com/omnidev/omnidev/internal/query"
)

type queryParams struct {
	Query        string       `json:"query,omitempty" jsonschema:"Words to search for in the capabilities' names, docs, skills and rules; typos and word forms still match, quote a phrase to match it exactly. Leave empty for a summary of every enabled capability with its TypeScript type definitions, as many as fit (each summary says where the others are)."`
	Limit        queryLimit   `json:"limit,omitempty" jsonschema:"How many results to return at most, from 1 to 100 (default 8)."`
	IncludeTypes bool         `json:"include_types,omitempty" jsonschema:"Also return the TypeScript declarations (declare module blocks) of what is found: a wrapped MCP server's tools found, a small capability's whole module."`
	Kinds        []resultKind `json:"kinds,omitempty" jsonschema:"Return only these kinds of result: capability, skill, doc, rule, tool (default: all)."`
}

// queryLimit is omni_query's limit. Its schema carries the bounds and the
// default, so the SDK refuses a limit out of range before the handler runs
// and fills in the default when the agent gives none.
type queryLimit int

// resultKind is a kind of result omni_query can be restricted to.
type resultKind string

// queryTypeSchemas are the schemas of queryParams' own types.
func queryTypeSchemas() map[reflect.Type]*jsonschema.Schema {
	kinds := make([]any, 0, len(query.Kinds()))
	for _, k := range query.Kinds() {
		kinds = append(kinds, k)
	}
	return map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[queryLimit](): {
			Type:    "integer",
			Minimum: jsonschema.Ptr(1.0),
			Maximum: jsonschema.Ptr(float64(query.MaxLimit)),
			Default: json.RawMessage(fmt.Sprint(query.DefaultLimit)),
		},
		reflect.TypeFor[resultKind](): {Type: "string", Enum: kinds},
	}
}

func addQueryTool(s *mcp.Server, e *engine.Engine) error {
	in, err := schemaFor[queryParams](queryTypeSchemas())
	if err != nil {
		return fmt.Errorf("omni_query input schema: %w", err)
	}
	out, err := schemaFor[query.Result](nil)
	if err != nil {
		return fmt.Errorf("omni_query output schema: %w", err)
	}
	mcp.AddTool(s, &mcp.Tool{
		Name: "omni_query",
		Description: "Search the repository's capability modules: their descriptions, docs, skills and rules. " +
			"Returns ranked results with a source tag (capability:<id>, skill:<id>/<name>, doc:<id>/<name>, rule:<id>/<name>, tool:<id>/<name> for a wrapped MCP server's tool), " +
			"a title, a snippet with matched terms in **bold**, a score, and the uri of the whole document for resources/read. An empty query returns a summary of every enabled " +
			"capability and its TypeScript type definitions, as many as fit: start there, then write a program for omni_execute.",
		InputSchema:  in,
		OutputSchema: out,
		Annotations: &mcp.ToolAnnotations{
			Title:          "Search capabilities",
			ReadOnlyHint:   true,
			IdempotentHint: true,
			OpenWorldHint:  boolPtr(false),
		},
	}, func(ctx context.Context, _ *mcp.CallToolRequest, p queryParams) (*mcp.CallToolResult, any, error) {
		req := query.Request{Query: p.Query, Limit: int(p.Limit), IncludeTypes: p.IncludeTypes}
		for _, k := range p.Kinds {
			req.Kinds = append(req.Kinds, string(k))
		}
		res, err := e.Query(ctx, req)
		if err != nil {
			if errors.Is(err, query.ErrInvalidRequest) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				return nil, nil, err
			}
			return nil, nil, fault(e.Logger(), "omni_query", err, "query", p.Query, "limit", req.Limit, "kinds", req.Kinds)
		}
		return result(res)
	})
	return nil
}
