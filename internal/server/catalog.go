package server

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/omnidev/omnidev/internal/capability"
	"github.com/omnidev/omnidev/internal/engine"
)

// catalog is what the server offers besides its tools, for people to pick
// from their host's menus: the skills of the enabled capabilities as prompts
// (prompts.go), their docs, rules, skills and types as resources
// (resources.go), and completions of both (completion.go). It follows the
// engine's reloads and keeps the SDK's lists in step with them; the SDK then
// sends the list_changed notifications.
type catalog struct {
	logger *slog.Logger
	srv    *mcp.Server
	cur    atomic.Pointer[catalogState]
	syncMu sync.Mutex // one sync at a time, so the SDK's lists follow cur
}

// catalogState is the catalog of one registry. It is immutable.
type catalogState struct {
	prompts   map[string]*promptEntry   // by prompt name
	resources map[string]*resourceEntry // by URI
	// caps are the enabled capabilities by id; ids sorted.
	caps map[string]*capability.Capability
	ids  []string
	// files are the paths of each capability's resources in its folder.
	files map[string][]string
	// tools hold the declarations of the wrapped servers' tools, by
	// capability id (see toolResource).
	tools map[string]*lazyTypes
}

func newCatalog(logger *slog.Logger) *catalog {
	c := &catalog{logger: logger}
	c.cur.Store(&catalogState{})
	return c
}

// serverCapabilities are announced whether or not any prompt or resource
// exists yet: a skill added later must not need a reconnection to be seen.
func serverCapabilities() *mcp.ServerCapabilities {
	return &mcp.ServerCapabilities{
		Logging:   &mcp.LoggingCapabilities{},
		Prompts:   &mcp.PromptCapabilities{ListChanged: true},
		Resources: &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true},
	}
}

// attach registers the catalog of e's registry on s and follows e's reloads.
func (c *catalog) attach(s *mcp.Server, e *engine.Engine) {
	c.srv = s
	for _, t := range resourceTemplates {
		s.AddResourceTemplate(&t.ResourceTemplate, c.readResource)
	}
	s.AddReceivingMiddleware(c.explainMissing)
	e.OnReload(c.sync)
	c.sync(e.Registry())
}

// sync makes reg's catalog the current one and updates the SDK's lists: what
// disappeared is removed, what is new or described differently is (re)added.
// Subscribers of a resource whose content changed or that disappeared are
// told so.
func (c *catalog) sync(reg *capability.Registry) {
	c.syncMu.Lock()
	defer c.syncMu.Unlock()
	old, next := c.cur.Load(), newCatalogState(reg, c.logger)
	c.cur.Store(next)

	var gone []string
	for name := range old.prompts {
		if next.prompts[name] == nil {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		c.srv.RemovePrompts(gone...)
	}
	for name, p := range next.prompts {
		if o := old.prompts[name]; o == nil || !reflect.DeepEqual(o.prompt, p.prompt) {
			c.srv.AddPrompt(p.prompt, c.getPrompt)
		}
	}

	var removed, updated []string
	for uri, r := range old.resources {
		switch n := next.resources[uri]; {
		case n == nil:
			removed = append(removed, uri)
			updated = append(updated, uri)
		case n.text != r.text:
			updated = append(updated, uri)
		}
	}
	if len(removed) > 0 {
		c.srv.RemoveResources(removed...)
	}
	for uri, r := range next.resources {
		if o := old.resources[uri]; o == nil || !sameResource(o.resource, r.resource) {
			c.srv.AddResource(r.resource, c.readResource)
		}
	}
	slices.Sort(updated)
	for _, uri := range updated {
		// The SDK sends it only to the sessions subscribed to uri.
		if err := c.srv.ResourceUpdated(context.Background(), &mcp.ResourceUpdatedNotificationParams{URI: uri}); err != nil {
			c.logger.Warn("notify resource update", "uri", uri, "err", err)
		}
	}
	c.logger.Debug("catalog synced", "prompts", len(next.prompts), "resources", len(next.resources),
		"prompts_removed", len(gone), "resources_removed", len(removed), "resources_updated", len(updated))
}

// sameResource compares the fields newResourceEntry sets.
func sameResource(a, b *mcp.Resource) bool {
	return a.URI == b.URI && a.Name == b.Name && a.Title == b.Title && a.Description == b.Description &&
		a.MIMEType == b.MIMEType && a.Size == b.Size
}

func newCatalogState(reg *capability.Registry, logger *slog.Logger) *catalogState {
	st := &catalogState{
		prompts:   make(map[string]*promptEntry),
		resources: make(map[string]*resourceEntry),
		caps:      make(map[string]*capability.Capability),
		files:     make(map[string][]string),
		tools:     make(map[string]*lazyTypes),
	}
	for _, c := range reg.Capabilities {
		st.caps[c.ID] = c
		st.ids = append(st.ids, c.ID)
		if c.MCP != nil {
			st.tools[c.ID] = &lazyTypes{}
		}
		for i := range c.Skills {
			p := newPromptEntry(c, &c.Skills[i])
			if first := st.prompts[p.prompt.Name]; first != nil {
				logger.Warn("two skills give the same prompt name; the second is not offered as a prompt",
					"prompt", p.prompt.Name, "first", first.skill.Path, "second", p.skill.Path)
				continue
			}
			st.prompts[p.prompt.Name] = p
		}
		for _, f := range c.Files() {
			r := newResourceEntry(c, f)
			st.resources[r.resource.URI] = r
			st.files[c.ID] = append(st.files[c.ID], f.Rel)
		}
	}
	slices.Sort(st.ids)
	return st
}

// explainMissing answers prompts/get of an unknown prompt, and
// resources/read of a URI that names no resource, with an error that says
// what exists, rather than the SDK's bare "unknown prompt" or "Resource not
// found" (which it sends without calling any handler when no resource or
// template matches the URI).
func (c *catalog) explainMissing(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch r := req.(type) {
		case *mcp.GetPromptRequest:
			if st := c.cur.Load(); r.Params != nil && st.prompts[r.Params.Name] == nil {
				return nil, st.unknownPrompt(r.Params.Name)
			}
		case *mcp.ReadResourceRequest:
			// A run's diff is not in the catalog: runResources answers it.
			if r.Params != nil && !strings.HasPrefix(r.Params.URI, runsURIPrefix) {
				if _, err := c.cur.Load().lookup(r.Params.URI); err != nil {
					return nil, err
				}
			}
		}
		return next(ctx, method, req)
	}
}

// invalidParams is the JSON-RPC error for a request the client must change.
func invalidParams(format string, args ...any) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// notFound is the error for a resource that does not exist, with the code
// and data MCP specifies and a message that says what does.
func notFound(uri, format string, args ...any) error {
	data, _ := json.Marshal(struct {
		URI string `json:"uri"`
	}{uri})
	return &jsonrpc.Error{Code: mcp.CodeResourceNotFound, Message: fmt.Sprintf(format, args...), Data: data}
}
