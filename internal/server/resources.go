package server

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/omnidev/omnidev/internal/capability"
	"github.com/omnidev/omnidev/internal/tsgen"
)

// MIME types of the resources.
const (
	mimeMarkdown   = "text/markdown"
	mimeTypeScript = "application/typescript"
)

// resourceEntry is a capability file offered as a resource.
type resourceEntry struct {
	resource *mcp.Resource
	text     string
}

func newResourceEntry(c *capability.Capability, f capability.File) *resourceEntry {
	return &resourceEntry{
		resource: &mcp.Resource{
			URI:         c.URI(f),
			Name:        c.ID + "/" + f.Rel,
			Title:       f.Title,
			Description: f.Description,
			MIMEType:    mimeType(f.Rel),
			Size:        int64(len(f.Text)),
		},
		text: f.Text,
	}
}

func mimeType(rel string) string {
	if strings.HasSuffix(rel, ".ts") {
		return mimeTypeScript
	}
	return mimeMarkdown
}

// resourceTemplate is a URI template of capability files. Its last
// variable (after capability) names a file under dir, before suffix.
type resourceTemplate struct {
	mcp.ResourceTemplate
	variable    string
	dir, suffix string
}

// resourceTemplates let a client build the URI of a capability file it was
// not listed (and complete it, see completion.go).
var resourceTemplates = []resourceTemplate{
	{ResourceTemplate: mcp.ResourceTemplate{
		URITemplate: "omni://{capability}/definition.md", Name: "definition", Title: "Capability definition",
		Description: "The main doc of a capability: what it is for and how to use it.", MIMEType: mimeMarkdown,
	}},
	{ResourceTemplate: mcp.ResourceTemplate{
		URITemplate: "omni://{capability}/docs/{path}", Name: "doc", Title: "Capability doc",
		Description: "A doc of a capability; path is the file under docs/, such as usage.md.", MIMEType: mimeMarkdown,
	}, variable: "path", dir: "docs/"},
	{ResourceTemplate: mcp.ResourceTemplate{
		URITemplate: "omni://{capability}/rules/{path}", Name: "rule", Title: "Capability rule",
		Description: "A rule of a capability; path is the file under rules/, such as naming.md.", MIMEType: mimeMarkdown,
	}, variable: "path", dir: "rules/"},
	{ResourceTemplate: mcp.ResourceTemplate{
		URITemplate: "omni://{capability}/skills/{skill}/SKILL.md", Name: "skill", Title: "Capability skill",
		Description: "A skill of a capability (also offered as a prompt); skill is its folder under skills/.", MIMEType: mimeMarkdown,
	}, variable: "skill", dir: "skills/", suffix: "/SKILL.md"},
	{ResourceTemplate: mcp.ResourceTemplate{
		URITemplate: "omni://{capability}/types.d.ts", Name: "types", Title: "Capability type definitions",
		Description: "The TypeScript declarations of a capability's module.", MIMEType: mimeTypeScript,
	}},
	{ResourceTemplate: mcp.ResourceTemplate{
		URITemplate: "omni://{capability}/tools/{tool}.d.ts", Name: "tool", Title: "Tool declaration",
		Description: "The TypeScript declaration of one tool of a capability that wraps an MCP server: its function and the types it refers to; tool is the tool's MCP name.", MIMEType: mimeTypeScript,
	}, variable: "tool", dir: capability.ToolTypesDir, suffix: capability.ToolTypesExt},
}

// lookup returns the resource uri names, or an error that says why there is
// none: a URI that is not omni://, a path that leaves the capability folder,
// a capability that is not enabled, a file that is not offered. Only files
// of the current registry are ever served: nothing is read from disk here.
func (st *catalogState) lookup(uri string) (*resourceEntry, error) {
	id, rel, err := capability.ParseURI(uri)
	if err != nil {
		return nil, notFound(uri, "%v", err)
	}
	if st.caps[id] == nil {
		return nil, notFound(uri, "capability %q is not enabled; enabled capabilities: %s", id, strings.Join(st.ids, ", "))
	}
	r := st.resources[capability.URI(id, rel)]
	if r != nil {
		return r, nil
	}
	c := st.caps[id]
	if tool, ok := toolOf(rel); ok && c.MCP != nil {
		return st.toolResource(uri, c, tool)
	}
	switch {
	case rel == capability.TypesFile && c.MCP != nil && c.ToolsError != "":
		return nil, notFound(uri, "capability %s has no type definitions yet: they are generated from its MCP server's tools, which are not listed (%s)", id, c.ToolsError)
	case rel == capability.TypesFile && c.MCP != nil:
		return nil, notFound(uri, "capability %s has no type definitions: its MCP server lists no tools", id)
	case rel == capability.TypesFile:
		return nil, notFound(uri, "capability %s has no types.d.ts: add one beside its index.ts to type its module", id)
	}
	readable := "none"
	if files := st.files[id]; len(files) > 0 {
		readable = strings.Join(files, ", ")
	}
	return nil, notFound(uri, "%s is not a file of capability %s that can be read; its readable files: %s (see resources/list)", rel, id, readable)
}

// toolOf returns the MCP name of the tool whose declaration rel names
// (tools/<name>.d.ts).
func toolOf(rel string) (string, bool) {
	rest, ok := strings.CutPrefix(rel, capability.ToolTypesDir)
	if !ok {
		return "", false
	}
	return strings.CutSuffix(rest, capability.ToolTypesExt)
}

// toolResource returns the declaration of one tool of c, a capability that
// wraps an MCP server: what an omni_query hit of kind tool links to. It is
// built from the module's declaration, which is generated once per
// catalog state, when a tool's is first read.
func (st *catalogState) toolResource(uri string, c *capability.Capability, tool string) (*resourceEntry, error) {
	if !slices.ContainsFunc(c.Tools, func(t capability.Tool) bool { return t.Name == tool }) {
		if c.ToolsError != "" {
			return nil, notFound(uri, "capability %s has no tool declarations yet: its MCP server's tools are not listed (%s)", c.ID, c.ToolsError)
		}
		return nil, notFound(uri, "capability %s has no tool %q; omni_query with kinds [\"tool\"] finds its tools, and each hit's uri names its declaration", c.ID, tool)
	}
	g := st.tools[c.ID]
	g.once.Do(func() { g.types = tsgen.Generate(c.Module, c.Tools) })
	text := g.types.Select([]string{tool})
	return &resourceEntry{
		resource: &mcp.Resource{
			URI:         capability.ToolURI(c.ID, tool),
			Name:        c.ID + "/" + capability.ToolTypesDir + tool + capability.ToolTypesExt,
			Title:       fmt.Sprintf("%s tool %s", c.Module, tool),
			Description: fmt.Sprintf("The TypeScript declaration of the function of tool %q in the %q module, and of the types it refers to.", tool, c.Module),
			MIMEType:    mimeTypeScript,
			Size:        int64(len(text)),
		},
		text: text,
	}, nil
}

// lazyTypes is the declaration of one wrapped server's module, in parts,
// generated when a tool's declaration is first read.
type lazyTypes struct {
	once  sync.Once
	types *tsgen.Types
}

// readResource answers resources/read.
func (c *catalog) readResource(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	r, err := c.cur.Load().lookup(req.Params.URI)
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{
		URI:      r.resource.URI,
		MIMEType: r.resource.MIMEType,
		Text:     r.text,
	}}}, nil
}

// subscribe accepts subscriptions to the resources that exist; the SDK keeps
// the list, and sync tells the subscribers when one changes.
func (c *catalog) subscribe(_ context.Context, req *mcp.SubscribeRequest) error {
	_, err := c.cur.Load().lookup(req.Params.URI)
	return err
}

func (c *catalog) unsubscribe(context.Context, *mcp.UnsubscribeRequest) error { return nil }
