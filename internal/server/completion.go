package server

import (
	"context"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/omnidev/omnidev/internal/capability"
)

// maxCompletions is the most values one completion returns, as MCP allows.
const maxCompletions = 100

// complete answers completion/complete: the values of a prompt argument the
// skill lists, and the capability ids, doc and rule paths and skill folders
// of the resource templates; those that start with what was typed (case
// ignored).
func (c *catalog) complete(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	p := req.Params
	st := c.cur.Load()
	var candidates []string
	switch p.Ref.Type {
	case "ref/prompt":
		e := st.prompts[p.Ref.Name]
		if e == nil {
			return nil, st.unknownPrompt(p.Ref.Name)
		}
		i := slices.IndexFunc(e.skill.Arguments, func(a capability.SkillArgument) bool { return a.Name == p.Argument.Name })
		if i < 0 {
			return nil, invalidParams("prompt %q has no argument %q", p.Ref.Name, p.Argument.Name)
		}
		candidates = e.skill.Arguments[i].Values
	case "ref/resource":
		i := slices.IndexFunc(resourceTemplates, func(t resourceTemplate) bool { return t.URITemplate == p.Ref.URI })
		if i < 0 {
			return nil, invalidParams("unknown resource template %q; resources/templates/list names them", p.Ref.URI)
		}
		t := resourceTemplates[i]
		switch p.Argument.Name {
		case "capability":
			candidates = st.ids
		case t.variable:
			var capID string
			if p.Context != nil {
				capID = p.Context.Arguments["capability"]
			}
			if t.dir == capability.ToolTypesDir {
				candidates = st.toolNames(capID)
			} else {
				candidates = st.filesUnder(capID, t.dir, t.suffix)
			}
		default:
			return nil, invalidParams("resource template %q has no variable %q", p.Ref.URI, p.Argument.Name)
		}
	default:
		return nil, invalidParams("unknown reference type %q; use ref/prompt or ref/resource", p.Ref.Type)
	}
	values := matching(candidates, p.Argument.Value)
	res := &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: values, Total: len(values)}}
	if len(values) > maxCompletions {
		res.Completion.Values, res.Completion.HasMore = values[:maxCompletions], true
	}
	return res, nil
}

// toolNames returns the MCP names of the tools of the wrapped servers, of
// capability capID or, when it is not enabled or empty, of every one;
// sorted, without repeats.
func (st *catalogState) toolNames(capID string) []string {
	ids := st.ids
	if st.caps[capID] != nil {
		ids = []string{capID}
	}
	var names []string
	for _, id := range ids {
		if c := st.caps[id]; c.MCP != nil {
			for _, t := range c.Tools {
				names = append(names, t.Name)
			}
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// filesUnder returns the names of the resource files under dir and before
// suffix, of capability capID or, when it is not enabled or empty, of every
// capability; sorted, without repeats.
func (st *catalogState) filesUnder(capID, dir, suffix string) []string {
	ids := st.ids
	if st.caps[capID] != nil {
		ids = []string{capID}
	}
	var names []string
	for _, id := range ids {
		for _, rel := range st.files[id] {
			if rest, ok := strings.CutPrefix(rel, dir); ok {
				if name, ok := strings.CutSuffix(rest, suffix); ok {
					names = append(names, name)
				}
			}
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// matching returns the candidates that start with prefix, case ignored.
func matching(candidates []string, prefix string) []string {
	prefix = strings.ToLower(prefix)
	out := []string{}
	for _, c := range candidates {
		if strings.HasPrefix(strings.ToLower(c), prefix) {
			out = append(out, c)
		}
	}
	return out
}
