package query

import "github.com/omnidev/omnidev/internal/capability"

// hitURI returns the URI of the file that holds the document kind/name of
// c: the resource an agent reads for the whole of what a hit shows a
// snippet of; for a tool of a wrapped server, the declaration of that tool
// alone (the module's whole types.d.ts may be megabytes). It is empty when
// c is nil (a hit from an update newer than the caller's view) or has no
// such file.
func hitURI(c *capability.Capability, kind, name string) string {
	if c == nil {
		return ""
	}
	switch kind {
	case KindCapability:
		if d, ok := c.Definition(); ok {
			return fileURI(c, d.Path)
		}
		if c.Types != "" {
			return capability.URI(c.ID, capability.TypesFile)
		}
	case KindSkill:
		for _, s := range c.Skills {
			if s.Name == name {
				return fileURI(c, s.Path)
			}
		}
	case KindTool:
		if c.MCP != nil {
			return capability.ToolURI(c.ID, name)
		}
	case KindDoc, KindRule:
		docs := c.Docs
		if kind == KindRule {
			docs = c.Rules
		}
		for _, d := range docs {
			if d.Name == name {
				return fileURI(c, d.Path)
			}
		}
	}
	return ""
}

// fileURI is c.FileURI, empty for a document that was not read from a file.
func fileURI(c *capability.Capability, path string) string {
	if path == "" {
		return ""
	}
	return c.FileURI(path)
}
