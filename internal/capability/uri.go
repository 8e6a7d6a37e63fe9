package capability

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"strings"
)

// URIScheme is the scheme of the URIs that name the files of capabilities:
// omni://<capability id>/<path inside its folder>.
const URIScheme = "omni"

// TypesFile is the type definitions file of a capability.
const TypesFile = "types.d.ts"

// ToolTypesDir and ToolTypesExt frame the path of the declaration of one
// tool of a capability that wraps an MCP server: tools/<MCP name>.d.ts. It
// is no file on disk: the server builds it from the tool's schemas.
const (
	ToolTypesDir = "tools/"
	ToolTypesExt = ".d.ts"
)

// ToolURI returns the URI of the declaration of the tool of capability id
// named tool (its MCP name), or "" when that name cannot be a file name
// inside the capability folder (it holds a slash or a backslash).
func ToolURI(id, tool string) string {
	rel := ToolTypesDir + tool + ToolTypesExt
	uri := URI(id, rel)
	if _, got, err := ParseURI(uri); err != nil || got != rel || strings.ContainsAny(tool, "/\\") {
		return ""
	}
	return uri
}

// ErrNotCapabilityFile is wrapped by the errors of ParseURI.
var ErrNotCapabilityFile = errors.New("not the URI of a capability file")

// URI returns the URI of the file rel (with "/") inside capability id's folder.
func URI(id, rel string) string {
	u := url.URL{Scheme: URIScheme, Host: id, Path: "/" + rel}
	return u.String()
}

// ParseURI returns the capability id and the path inside its folder that an
// omni:// URI names. It refuses a path that is not clean or leaves the
// folder (".." in any spelling), so rel can be looked up as it is.
func ParseURI(uri string) (id, rel string, err error) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != URIScheme || u.Opaque != "" || u.User != nil || u.Port() != "" || u.RawQuery != "" || u.Fragment != "" {
		return "", "", fmt.Errorf("%w: %q; want omni://<capability>/<path>, such as omni://tasks/definition.md", ErrNotCapabilityFile, uri)
	}
	id, rel = u.Host, strings.TrimPrefix(u.Path, "/")
	if ValidateID(id) != nil {
		return "", "", fmt.Errorf("%w: %q does not name a capability id", ErrNotCapabilityFile, uri)
	}
	if rel == "" || path.Clean(rel) != rel || strings.HasPrefix(rel, "../") || rel == ".." || strings.Contains(rel, `\`) {
		return "", "", fmt.Errorf("%w: the path of %q leaves the capability folder or is not clean; use a path inside it, such as docs/usage.md", ErrNotCapabilityFile, uri)
	}
	return id, rel, nil
}

// File is a text file of a capability that is offered to people and agents
// to read whole: definition.md, docs, rules, skills and types.d.ts.
type File struct {
	// Rel is the path inside the capability folder, with "/".
	Rel string
	// Title is the document's heading (a skill's, else its name); for
	// types.d.ts, a phrase naming the module.
	Title string
	// Description is the document's first sentence, else its heading; a
	// skill's frontmatter description.
	Description string
	// Text is the whole content.
	Text string
}

// URI returns the URI of f in capability c.
func (c *Capability) URI(f File) string { return URI(c.ID, f.Rel) }

// FileURI returns the URI of a file of c given by its path relative to the
// repository root (as in Doc.Path and Skill.Path).
func (c *Capability) FileURI(p string) string {
	return URI(c.ID, strings.TrimPrefix(p, capabilitiesDir+"/"+c.ID+"/"))
}

// Files lists c's files to read: definition.md and docs (as in Docs), rules,
// skills and types.d.ts, in that order.
func (c *Capability) Files() []File {
	prefix := capabilitiesDir + "/" + c.ID + "/"
	files := make([]File, 0, len(c.Docs)+len(c.Rules)+len(c.Skills)+1)
	for _, group := range [][]Doc{c.Docs, c.Rules} {
		for _, d := range group {
			files = append(files, File{
				Rel:         strings.TrimPrefix(d.Path, prefix),
				Title:       d.Title,
				Description: markdownSummary(d.Body, d.Title),
				Text:        d.Body,
			})
		}
	}
	for _, s := range c.Skills {
		files = append(files, File{Rel: strings.TrimPrefix(s.Path, prefix), Title: s.Title, Description: s.Description, Text: s.Text})
	}
	if c.Types != "" {
		files = append(files, File{
			Rel:         TypesFile,
			Title:       fmt.Sprintf("%s type definitions", c.Module),
			Description: fmt.Sprintf("The TypeScript declarations of the %q module: what a program can import from it.", c.Module),
			Text:        c.Types,
		})
	}
	return files
}
