package engine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/omnidev/omnidev/internal/capability"
	"github.com/omnidev/omnidev/internal/trust"
)

// load reads the repository at root and leaves out of the servers to start
// every wrapped server whose definition the user has not approved (see
// package trust): such a capability is listed as unavailable, with the
// reason and the command that approves it.
func load(root string, environ []string) (*capability.Registry, error) {
	reg, err := capability.Load(root, environ)
	if err != nil {
		return nil, err
	}
	return applyTrust(reg, trust.Open(environ)), nil
}

// applyTrust returns reg with the wrapped servers store does not approve
// moved to Unavailable. reg itself is not modified.
func applyTrust(reg *capability.Registry, store trust.Store) *capability.Registry {
	var pending []*capability.Capability
	for _, c := range reg.Capabilities {
		if c.MCP != nil && !store.Approved(reg.Root, c.ID, c.MCPDefinition()) {
			pending = append(pending, c)
		}
	}
	if len(pending) == 0 {
		return reg
	}
	out := *reg
	out.Capabilities = slices.DeleteFunc(slices.Clone(reg.Capabilities), func(c *capability.Capability) bool { return slices.Contains(pending, c) })
	out.Unavailable = slices.Clone(reg.Unavailable)
	out.Problems = slices.Clone(reg.Problems)
	for _, c := range pending {
		cp := *c
		cp.Error = UntrustedMessage(reg.Root)
		out.Unavailable = append(out.Unavailable, &cp)
		out.Problems = append(out.Problems, capability.Problem{Capability: c.ID, Path: reg.Layout.CapabilitiesDir + "/" + c.ID + "/capability.toml", Message: cp.Error})
	}
	slices.SortFunc(out.Unavailable, func(a, b *capability.Capability) int { return strings.Compare(a.ID, b.ID) })
	return &out
}

// UntrustedMessage says why a wrapped server does not start, and how to
// approve it.
func UntrustedMessage(root string) string {
	return fmt.Sprintf("wraps an MCP server whose command runs on this machine outside the sandbox, and this definition is not approved: "+
		"review and approve it with `omnidev --dir %s trust`", root)
}

// Pending returns the definitions (capability id -> definition) of the
// wrapped servers of the repository at root, and which of them the user
// has approved, for `omnidev trust`.
func Pending(root string, environ []string) (defs map[string]string, approved map[string]bool, err error) {
	reg, err := capability.Load(root, environ)
	if err != nil {
		return nil, nil, err
	}
	store := trust.Open(environ)
	defs, approved = map[string]string{}, map[string]bool{}
	for _, c := range slices.Concat(reg.Capabilities, reg.Unavailable) {
		if def := c.MCPDefinition(); def != "" {
			defs[c.ID] = def
			approved[c.ID] = store.Approved(reg.Root, c.ID, def)
		}
	}
	return defs, approved, nil
}
